# cmake/uninstall.cmake -- `make uninstall`: cmake -DMANIFEST=FILE -P
# cmake/uninstall.cmake removes every file listed in FILE (the
# install_manifest.txt `cmake --install` wrote), then each of their
# folders named manta or Manta (include/manta, share/doc/manta,
# lib/.../cmake/Manta, the Python package with the __pycache__ python3
# wrote into it) once empty. Other folders stay, even when empty. The
# manifest holds the paths without DESTDIR: give the install's DESTDIR
# again (`make uninstall DESTDIR=...`).
if(NOT MANIFEST OR NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "make uninstall: no ${MANIFEST}: nothing was "
                      "installed from this build dir (make install)")
endif()
file(STRINGS "${MANIFEST}" mt_files)
set(mt_dirs "")
foreach(f IN LISTS mt_files)
  set(f "$ENV{DESTDIR}${f}")
  if(EXISTS "${f}" OR IS_SYMLINK "${f}")
    message(STATUS "Removing: ${f}")
    file(REMOVE "${f}")
  endif()
  get_filename_component(d "${f}" DIRECTORY)
  get_filename_component(n "${d}" NAME)
  if(n STREQUAL "manta" OR n STREQUAL "Manta")
    list(APPEND mt_dirs "${d}")
  endif()
endforeach()
list(REMOVE_DUPLICATES mt_dirs)
foreach(d IN LISTS mt_dirs)
  file(REMOVE_RECURSE "${d}/__pycache__")
  execute_process(COMMAND rmdir "${d}" ERROR_QUIET)   # only if empty
endforeach()
