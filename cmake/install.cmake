# cmake/install.cmake -- what `cmake --install build --prefix P` (and
# `make install PREFIX=P`) puts under P:
#   bin/                 manta, manta-head, manta-worker, the helpers the
#                        worker execs (manta-executor, manta-guard) and
#                        manta-microbenchmark (its task library in
#                        lib/manta/): the CLI
#                        finds the daemons, and the worker its helpers, next
#                        to their own binary (/proc/self/exe), so they all
#                        share one folder
#   LIB/                 libmanta.so.0.1.0 (SONAME libmanta.so.0), the
#                        libmanta.so link, libmanta.a (the merged static
#                        archive, build/lib/libmanta_static.a)
#   LIB/pkgconfig/       manta.pc (relocatable: prefix from ${pcfiledir})
#   LIB/cmake/Manta/     MantaConfig.cmake + version file: find_package(Manta)
#                        gives the imported target Manta::manta
#   include/manta/       the public SDK headers (sdk/include/manta/*.h)
#   share/doc/manta/     README.md and docs/*.md
#   lib/python3/dist-packages/manta/   the Python bridge (the folder is
#                        chosen from the prefix: cmake/install_python.cmake)
#   share/man/man1, man8 manta(1), manta-<command>(1), manta-head(8),
#                        manta-worker(8): cmake/manpages.cmake
# The CLI links libmanta.so and finds it through its RPATH
# ($ORIGIN/../LIB), so an install needs no LD_LIBRARY_PATH. The daemons and
# helpers link only static libraries. LIB is CMAKE_INSTALL_LIBDIR:
# lib/<multiarch> on Debian for every prefix (the top CMakeLists.txt).
# Included by the top CMakeLists.txt after every module (not in MANTA_FUZZ
# builds); cmake/package.cmake packages the same files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Manta)

# The CLI finds libmanta relative to itself wherever the prefix lands.
file(RELATIVE_PATH MT_BIN_TO_LIB /${CMAKE_INSTALL_BINDIR}
     /${CMAKE_INSTALL_LIBDIR})
set_target_properties(manta manta-microbenchmark PROPERTIES
                      INSTALL_RPATH "$ORIGIN/${MT_BIN_TO_LIB}")

install(TARGETS manta manta-head manta-worker manta-executor manta-guard
                manta-microbenchmark
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# `manta microbenchmark`'s no-op task library, private to it: found from
# bin/ as ../lib/manta (bench/microbenchmark.c), whatever the lib dir.
install(TARGETS bench_noop LIBRARY DESTINATION lib/manta)

# libmanta.so: exported as Manta::manta (EXPORT_NAME in sdk/CMakeLists.txt).
install(TARGETS manta_sdk EXPORT MantaTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libmanta_static.a
        DESTINATION ${CMAKE_INSTALL_LIBDIR} RENAME libmanta.a)
# A stripped install (`cmake --install --strip`, the Debian package) drops
# the archive's debug info too, with the build dir's paths in it.
install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND ${CMAKE_STRIP} --strip-debug
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libmanta.a\")
endif()")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/sdk/include/manta
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

# pkg-config: prefix is found from the .pc file's own folder, so the file
# is right for any --prefix given at install time (and DESTDIR).
file(RELATIVE_PATH MT_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" MT_PC_TO_PREFIX "${MT_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/manta.pc.in
               ${CMAKE_BINARY_DIR}/manta.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/manta.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The CMake package.
install(EXPORT MantaTargets NAMESPACE Manta::
        DESTINATION ${MT_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/MantaConfig.cmake.in
  ${CMAKE_BINARY_DIR}/MantaConfig.cmake
  INSTALL_DESTINATION ${MT_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/MantaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/MantaConfig.cmake
              ${CMAKE_BINARY_DIR}/MantaConfigVersion.cmake
        DESTINATION ${MT_INSTALL_CMAKEDIR})

include(${CMAKE_CURRENT_LIST_DIR}/manpages.cmake)

file(GLOB MT_DOCS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${MT_DOCS}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The Python bridge (sdk/python/manta). Its folder depends on the prefix
# given at install time, so cmake/install_python.cmake picks it then;
# MANTA_INSTALL_PYTHONDIR (relative to the prefix, or absolute) overrides.
set(MANTA_INSTALL_PYTHONDIR "" CACHE STRING
    "Folder of the Python package manta (empty: chosen from the prefix)")
if(MT_PYTHON AND NOT MT_PYTHON3_VERSION)
  execute_process(COMMAND ${MT_PYTHON} -c
    "import sys; print('%d.%d' % sys.version_info[:2])"
    OUTPUT_VARIABLE MT_PY_OUT OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(MT_PYTHON3_VERSION "${MT_PY_OUT}" CACHE INTERNAL "python3 X.Y")
endif()
install(CODE "
  set(MT_PY_SRC \"${CMAKE_SOURCE_DIR}/sdk/python/manta\")
  set(MT_PY_STAGE \"${CMAKE_BINARY_DIR}/python\")
  set(MT_PY_DIR \"${MANTA_INSTALL_PYTHONDIR}\")
  set(MT_PY_VERSION \"${MT_PYTHON3_VERSION}\")
  set(MT_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")")
install(SCRIPT ${CMAKE_CURRENT_LIST_DIR}/install_python.cmake)
