# Kernels for sm_90a only (kernels/sm90a/*.cu): warpgroup MMA, bulk copies and mbarrier pipelines
# exist on compute capability 9.0 alone, so these sources are compiled for sm_90a and nothing
# else, into their own object library whose objects every target linking bitgate_kernels links
# too. The rest of the project keeps CMAKE_CUDA_ARCHITECTURES. Where CUDA is off, or the build
# does not target 90, or nvcc predates sm_90a, they are not built: their variants then have no
# device launcher and the engine skips their device checks with that reason. Where they are built,
# BITGATE_HAVE_SM90A is defined for the kernels, the specs, the mutants and the tests, which then
# name their plain launchers (kernels/mmq_q8_0.cu's dispatch, specs/mmq_q8_0.cpp, mutants/).
if(NOT BITGATE_HAVE_CUDA)
  return()
endif()
file(GLOB BITGATE_SM90A_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/sm90a/*.cu)
# Their mutants: linked where bitgate_mutants is (bitgate-mutants and the tests), never into bitgate.
file(GLOB BITGATE_SM90A_MUTANT_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/sm90a/mutants/*.cu)
if(NOT BITGATE_SM90A_SRC)
  return()
endif()
set(bitgate_sm90a_targets_90 OFF)
foreach(arch ${CMAKE_CUDA_ARCHITECTURES})
  if(arch MATCHES "^90")
    set(bitgate_sm90a_targets_90 ON)
  endif()
endforeach()
if(NOT bitgate_sm90a_targets_90 OR CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.0)
  message(STATUS "bitgate: sm_90a kernels not built (CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}, "
    "nvcc ${CMAKE_CUDA_COMPILER_VERSION})")
  return()
endif()
message(STATUS "bitgate: sm_90a kernels built: ${BITGATE_SM90A_SRC}")

function(bitgate_sm90a_objects target)
  add_library(${target} OBJECT ${ARGN})
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a>)
  # A spill inside the wgmma pipeline costs its speed without changing a bit, so no check would
  # see it (52 bytes spilled cost the GEMM 8-10%, docs/mmq_q8_0.md): ptxas fails the build instead.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=--warn-on-spills,--warning-as-error>)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/kernels/include
    ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/refimpl ${PROJECT_SOURCE_DIR}/harness)
  target_link_libraries(${target} PUBLIC ${BITGATE_CUDART})
  bitgate_cuda_flags(${target})
endfunction()

# Object files as interface sources: they reach every executable that links bitgate_kernels
# (bitgate_mutants), beside the other kernels' objects.
bitgate_sm90a_objects(bitgate_kernels_sm90a ${BITGATE_SM90A_SRC})
target_sources(bitgate_kernels INTERFACE $<TARGET_OBJECTS:bitgate_kernels_sm90a>)
target_compile_definitions(bitgate_specs PUBLIC BITGATE_HAVE_SM90A=1)
# The dispatcher (kernels/mmq_q8_0.cu) takes wgmma where it is built.
target_compile_definitions(bitgate_kernels PRIVATE BITGATE_HAVE_SM90A=1)
target_compile_definitions(bitgate_mutants PUBLIC BITGATE_HAVE_SM90A=1)
if(BITGATE_SM90A_MUTANT_SRC)
  bitgate_sm90a_objects(bitgate_mutants_sm90a ${BITGATE_SM90A_MUTANT_SRC})
  target_sources(bitgate_mutants INTERFACE $<TARGET_OBJECTS:bitgate_mutants_sm90a>)
endif()

# The PTX lint (cmake/ptx.cmake, deferred to the end) reads them too, as sm_90a.
list(APPEND BITGATE_KERNEL_SRC ${BITGATE_SM90A_SRC})
set_source_files_properties(${BITGATE_SM90A_SRC} PROPERTIES BITGATE_PTX_ARCH 90a)
