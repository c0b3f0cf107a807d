# cmake/package.cmake -- `make package`: the Debian package
# manta_<version>_<arch>.deb, made by CPack's DEB generator from this
# build dir (`cpack -G DEB`). It holds, installed to /usr:
#   everything cmake/install.cmake installs (lib folder lib/<multiarch>,
#   the Python bridge in /usr/lib/python3/dist-packages), stripped
#   /lib/systemd/system/   manta-head.service, manta-worker.service
#   /etc/manta/            head.env, worker.env (conffiles)
# and the maintainer scripts of deploy/debian/: postinst makes the system
# user `manta`, prerm stops and disables the units, postrm purge removes
# the user, /var/lib/manta and /etc/manta. Depends: the shared libraries'
# packages (dpkg-shlibdeps), python3 (the bridge), adduser (postinst).
# The package's own files are the component `deb`, which a plain
# `cmake --install` leaves out (EXCLUDE_FROM_ALL): make install never
# writes to /etc. docs/deploy.md, "Debian package".
set(MT_DEB_DIR ${CMAKE_SOURCE_DIR}/deploy/debian)

install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/manta-head.service
              ${CMAKE_SOURCE_DIR}/deploy/systemd/manta-worker.service
        DESTINATION /lib/systemd/system COMPONENT deb EXCLUDE_FROM_ALL)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/head.env
              ${CMAKE_SOURCE_DIR}/deploy/systemd/worker.env
        DESTINATION /etc/manta COMPONENT deb EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME manta)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Manta maintainers <manta@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "heterogeneous cluster task scheduler (CPU, GPU, TPU)")
set(CPACK_PACKAGE_DESCRIPTION
"Manta schedules tasks and actors onto a cluster's CPUs, GPUs and TPUs,
with a shared-memory object store on every node. This package holds the
head and worker daemons with their systemd units, the manta command, the C
SDK (libmanta, headers, pkg-config and CMake files) and the Python bridge.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, adduser")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "openssl, redis-server")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${MT_DEB_DIR}/conffiles
    ${MT_DEB_DIR}/postinst ${MT_DEB_DIR}/prerm ${MT_DEB_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# One package from the default component and `deb`.
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${CMAKE_BINARY_DIR};manta;Unspecified;/"
    "${CMAKE_BINARY_DIR};manta;deb;/")
include(CPack)
