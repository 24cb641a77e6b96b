# headroom_add_library(NAME SOURCES... DEPS ...): one static library per directory, named
# headroom_<dir>; its link list is the dependency rule of docs/architecture.md.
function(headroom_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  # The CLI parses flags with CLI11 and calls the libraries: no fuzz target reaches it.
  if(HEADROOM_FUZZ AND NOT name STREQUAL "headroom_cli")
    target_compile_options(${name} PRIVATE ${HEADROOM_FUZZ_FLAGS})
  endif()
endfunction()

# headroom_add_test(NAME SOURCES... DEPS ... [LABELS ...]): one gtest binary per directory,
# every case registered with CTest through gtest_discover_tests.
function(headroom_add_test name)
  if(NOT HEADROOM_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  set(labels unit ${ARG_LABELS})
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${labels}" ENVIRONMENT "HEADROOM_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()

# headroom_embed_files(OUT_CC NAMESPACE FUNCTION FILES...): generates a C++ source defining
# NAMESPACE::FUNCTION() over the given files' bytes, so the binary carries its data (catalogs)
# and runs from anywhere. A YAML file also carries its tree, made here by headroom_yaml_tree
# (core/yaml_reader.h: the same document, parsed several times faster; a malformed file fails
# the build).
function(headroom_embed_files out_cc namespace function)
  set(files ${ARGN})
  set(tree_dir ${CMAKE_CURRENT_BINARY_DIR}/embedded_trees)
  set(trees "")
  foreach(f IN LISTS files)
    if(f MATCHES "\\.yaml$")
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${f})
      set(tree ${tree_dir}/${rel}.tree)
      get_filename_component(tree_parent ${tree} DIRECTORY)
      add_custom_command(
        OUTPUT ${tree}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${tree_parent}
        COMMAND headroom_yaml_tree ${f} ${tree} ${rel}
        DEPENDS ${f} headroom_yaml_tree
        COMMENT "Parsing ${rel} for embedding"
        VERBATIM)
      list(APPEND trees ${tree})
    endif()
  endforeach()
  add_custom_command(
    OUTPUT ${out_cc}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cc} -DNAMESPACE=${namespace} -DFUNCTION=${function}
            -DBASE=${PROJECT_SOURCE_DIR} -DTREE_DIR=${tree_dir} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${files} ${trees} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding ${namespace} data files"
    VERBATIM)
  # Each generated file has its own anonymous-namespace kFile0.. names.
  set_source_files_properties(${out_cc} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
