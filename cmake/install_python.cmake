# cmake/install_python.cmake -- installs the Python bridge
# (sdk/python/manta); run by `cmake --install` (install(SCRIPT) in
# cmake/install.cmake, which sets the MT_PY_* variables first) because the
# folder depends on the prefix given at install time:
#   /usr        lib/python3/dist-packages     Debian's folder for packages
#   /usr/local  lib/python3.X/dist-packages   where Debian's python3.X looks
#                                             (as pip installs there)
#   otherwise   lib/python3/dist-packages     put it on PYTHONPATH
# MT_PY_DIR (MANTA_INSTALL_PYTHONDIR) overrides. The package gets a
# generated manta/_installed.py holding the lib folder relative to the
# package, so it loads the installed libmanta from any prefix, even a moved
# one, without environment variables (sdk/python/manta/_lib.py).
string(REGEX REPLACE "(.)/+$" "\\1" mt_prefix "${CMAKE_INSTALL_PREFIX}")
if(MT_PY_DIR)
  set(mt_pydir "${MT_PY_DIR}")
elseif(mt_prefix STREQUAL "/usr/local" AND MT_PY_VERSION)
  set(mt_pydir "lib/python${MT_PY_VERSION}/dist-packages")
else()
  set(mt_pydir "lib/python3/dist-packages")
endif()
if(NOT IS_ABSOLUTE "${mt_pydir}")
  set(mt_pydir "${mt_prefix}/${mt_pydir}")
endif()

file(RELATIVE_PATH mt_py_to_lib "${mt_pydir}/manta"
     "${mt_prefix}/${MT_LIBDIR}")
file(WRITE "${MT_PY_STAGE}/_installed.py"
"\"\"\"_installed.py -- written by `cmake --install` (cmake/install_python.cmake):
the folder of the installed libmanta, relative to this package.\"\"\"
LIBDIR = \"${mt_py_to_lib}\"
")
file(INSTALL "${MT_PY_SRC}" DESTINATION "${mt_pydir}"
     FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
file(INSTALL "${MT_PY_STAGE}/_installed.py" DESTINATION "${mt_pydir}/manta")
