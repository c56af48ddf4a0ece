# PTX of every kernel, for `bitgate lint` (harness/ptx_lint.cpp): the bit-exactness contract is
# checked on what the compiler emitted, so no header, macro or library call can hide an
# approximation. Also the lint's test fixtures (tests/lint_fixtures/*.cu).
#
# The PTX is compiled with the kernels' own flags. Its architecture is the first of
# CMAKE_CUDA_ARCHITECTURES, unless the source's COMPILE_OPTIONS name a compute_XX(a) (a per-file
# gencode set by another cmake/*.cmake part) or the source sets BITGATE_PTX_ARCH (e.g. 90a).
if(NOT BITGATE_HAVE_CUDA)
  return()
endif()

set(BITGATE_PTX_OUT ${PROJECT_BINARY_DIR}/ptx)
set(BITGATE_PTX_FIXTURE_OUT ${PROJECT_BINARY_DIR}/ptx_fixtures)
file(MAKE_DIRECTORY ${BITGATE_PTX_OUT} ${BITGATE_PTX_FIXTURE_OUT})

function(bitgate_ptx_default_arch out)
  list(GET CMAKE_CUDA_ARCHITECTURES 0 arch)
  string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
  if(NOT arch MATCHES "^[0-9]+[af]?$")
    message(WARNING "bitgate: PTX lint cannot pick one architecture from CMAKE_CUDA_ARCHITECTURES="
      "'${CMAKE_CUDA_ARCHITECTURES}'; using 90")
    set(arch 90)
  endif()
  set(${out} ${arch} PARENT_SCOPE)
endfunction()

# The flags every kernel translation unit gets from the build, minus code generation.
function(bitgate_ptx_common_flags out)
  separate_arguments(user UNIX_COMMAND "${CMAKE_CUDA_FLAGS}")
  string(TOUPPER "${CMAKE_BUILD_TYPE}" cfg)
  separate_arguments(config UNIX_COMMAND "${CMAKE_CUDA_FLAGS_${cfg}}")
  set(flags ${user} ${config} -std=c++20)
  if(CMAKE_CUDA_HOST_COMPILER)
    list(APPEND flags -ccbin ${CMAKE_CUDA_HOST_COMPILER})
  endif()
  list(APPEND flags -I${PROJECT_SOURCE_DIR}/kernels/include -I${PROJECT_SOURCE_DIR}/kernels)
  # As bitgate_kernels: launchers that validate index inputs use the host models' checks and BadInput.
  list(APPEND flags -I${PROJECT_SOURCE_DIR}/refimpl -I${PROJECT_SOURCE_DIR}/harness)
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# One .cu -> one .ptx; header dependencies come from nvcc's depfile.
function(bitgate_ptx_command src out arch)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_CUDA_COMPILER} ${ARGN} -arch=sm_${arch} -ptx ${src} -o ${out} -MD -MF ${out}.d
    DEPENDS ${src}
    DEPFILE ${out}.d
    COMMENT "PTX for the lint: ${out}"
    VERBATIM)
endfunction()

function(bitgate_ptx_arch_of src default out)
  set(arch ${default})
  get_source_file_property(opts ${src} COMPILE_OPTIONS)
  if(opts AND opts MATCHES "compute_([0-9]+[af]?)")
    string(REGEX MATCHALL "compute_[0-9]+[af]?" all "${opts}")
    list(GET all -1 last)
    string(REPLACE "compute_" "" arch "${last}")
  endif()
  get_source_file_property(forced ${src} BITGATE_PTX_ARCH)
  if(forced)
    set(arch ${forced})
  endif()
  set(${out} ${arch} PARENT_SCOPE)
endfunction()

# Deferred to the end of the top-level CMakeLists: the test target exists by then, and so do the
# per-file properties every other cmake/*.cmake part may set.
function(bitgate_ptx_setup)
  bitgate_ptx_default_arch(default_arch)
  bitgate_ptx_common_flags(common)

  set(kernel_ptx)
  foreach(src ${BITGATE_KERNEL_SRC})
    get_filename_component(name ${src} NAME_WE)
    set(out ${BITGATE_PTX_OUT}/${name}.ptx)
    bitgate_ptx_arch_of(${src} ${default_arch} arch)
    bitgate_ptx_command(${src} ${out} ${arch} ${common} ${BITGATE_CUDA_FP})
    list(APPEND kernel_ptx ${out})
  endforeach()
  # A kernel that was removed must not leave a stale .ptx behind for the lint to read.
  file(GLOB present ${BITGATE_PTX_OUT}/*.ptx)
  foreach(p ${present})
    if(NOT p IN_LIST kernel_ptx)
      file(REMOVE ${p} ${p}.d)
    endif()
  endforeach()
  add_custom_target(bitgate_ptx ALL DEPENDS ${kernel_ptx})
  add_dependencies(bitgate bitgate_ptx)
  # `cmake --build B --target bitgate_lint`: the lint as a build step, failing on any finding.
  add_custom_target(bitgate_lint COMMAND $<TARGET_FILE:bitgate> lint --ptx ${BITGATE_PTX_OUT} VERBATIM)
  add_dependencies(bitgate_lint bitgate)

  # Fixtures: fastmath.cu with --use_fast_math (and none of the contract's flags, which would
  # override it), the others with the kernels' flags.
  set(fixture_dir ${PROJECT_SOURCE_DIR}/tests/lint_fixtures)
  set(fixture_ptx)
  foreach(name fastmath expf clean)
    set(out ${BITGATE_PTX_FIXTURE_OUT}/${name}.ptx)
    if(name STREQUAL "fastmath")
      bitgate_ptx_command(${fixture_dir}/${name}.cu ${out} ${default_arch} ${common} --use_fast_math)
    else()
      bitgate_ptx_command(${fixture_dir}/${name}.cu ${out} ${default_arch} ${common} ${BITGATE_CUDA_FP})
    endif()
    list(APPEND fixture_ptx ${out})
  endforeach()
  # Mutants that break the contract on purpose: the lint must catch them as well as the diff.
  foreach(name rms_norm swiglu)
    set(out ${BITGATE_PTX_FIXTURE_OUT}/${name}_mutants.ptx)
    bitgate_ptx_command(${PROJECT_SOURCE_DIR}/mutants/${name}.cu ${out} ${default_arch} ${common} ${BITGATE_CUDA_FP})
    list(APPEND fixture_ptx ${out})
  endforeach()
  add_custom_target(bitgate_ptx_fixtures DEPENDS ${fixture_ptx})
  if(TARGET bitgate_tests)
    add_dependencies(bitgate_tests bitgate_ptx bitgate_ptx_fixtures)
  endif()
endfunction()

cmake_language(DEFER CALL bitgate_ptx_setup)
