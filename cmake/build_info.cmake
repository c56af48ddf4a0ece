# The commit the binaries are built from, for golden provenance and reports: read at configure
# time into a generated header. CMake re-configures when HEAD (or the branch it points at) moves,
# so the header follows the tree without a step that runs on every build.
execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
  OUTPUT_VARIABLE BITGATE_BUILD_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT BITGATE_BUILD_COMMIT)
  set(BITGATE_BUILD_COMMIT unknown)
endif()
foreach(ref HEAD)
  execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse --path-format=absolute --git-path ${ref}
    OUTPUT_VARIABLE ref_path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(ref_path AND EXISTS ${ref_path})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ref_path})
    file(READ ${ref_path} head_text)
    if(head_text MATCHES "^ref: ([^\n]+)")
      execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse --path-format=absolute --git-path ${CMAKE_MATCH_1}
        OUTPUT_VARIABLE branch_path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(branch_path AND EXISTS ${branch_path})
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${branch_path})
      endif()
    endif()
  endif()
endforeach()
set(BITGATE_VERSION_STRING ${PROJECT_VERSION})
configure_file(${PROJECT_SOURCE_DIR}/cmake/bitgate_build_info.hpp.in
  ${PROJECT_BINARY_DIR}/generated/bitgate_build_info.hpp @ONLY)
target_include_directories(bitgate_engine PRIVATE ${PROJECT_BINARY_DIR}/generated)
