# How the tree builds fast on 2 cores (figures in docs/architecture.md, "Build and CI time").
# None of this changes what is compiled or checked: the same sources, flags and warnings.

# A compiler cache outside the tree (ccache's default, ~/.cache/ccache), so a clean clone on the
# same machine reuses it. Paths under the source tree are hashed relative to it and the working
# directory is left out of the hash, so two clones in different folders share their entries.
option(HEADROOM_CCACHE "Compile through ccache when it is installed" ON)
if(HEADROOM_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(HEADROOM_CCACHE_PROGRAM ccache)
  if(HEADROOM_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=true
        ${HEADROOM_CCACHE_PROGRAM})
    # __FILE__ (gtest's assertions, HEADROOM_CHECK) and debug info name sources relative to the
    # tree: unity batches include their sources by absolute path, which would otherwise differ
    # between clones and miss the cache (ccache rewrites this flag itself under CCACHE_BASEDIR).
    add_compile_options(-ffile-prefix-map=${CMAKE_SOURCE_DIR}/=)
  endif()
endif()

# Unity builds: the heavy header-only libraries (CLI11, nlohmann-json, fmt, spdlog, gtest) are
# parsed and instantiated once per batch of sources instead of once per source. Generated data
# sources (embedded files) stay out of the batches.
option(HEADROOM_UNITY "Compile sources in unity batches" ON)
if(HEADROOM_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
endif()

# mold links the 170 MB binaries in a fraction of ld.bfd's time.
option(HEADROOM_MOLD "Link with mold when it is installed" ON)
if(HEADROOM_MOLD)
  find_program(HEADROOM_MOLD_PROGRAM mold)
  if(HEADROOM_MOLD_PROGRAM)
    add_link_options(-fuse-ld=mold)
  endif()
endif()
