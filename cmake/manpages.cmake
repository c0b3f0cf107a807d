# cmake/manpages.cmake -- the man pages, written at build time from the
# programs' own --help by cmake/manpage.py into build/man/ (gzipped):
# manta(1), manta-<command>(1) for every command `manta --help` lists,
# manta-head(8) and manta-worker(8). Installed into share/man/man1 and
# man8. Included by cmake/install.cmake; tests/integration/test_man.py
# (it_man) checks that every command and option has its page entry.
if(NOT MT_PYTHON)
  message(WARNING "python3 not found: no man pages")
  return()
endif()

set(MT_MAN_DIR ${CMAKE_BINARY_DIR}/man)
add_custom_command(
  OUTPUT ${MT_MAN_DIR}/.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${MT_MAN_DIR}
  COMMAND ${MT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/manpage.py
          $<TARGET_FILE_DIR:manta> ${MT_MAN_DIR} ${PROJECT_VERSION}
  COMMAND ${CMAKE_COMMAND} -E touch ${MT_MAN_DIR}/.stamp
  DEPENDS manta manta-head manta-worker ${CMAKE_CURRENT_LIST_DIR}/manpage.py
  COMMENT "writing the man pages from --help"
  VERBATIM)
add_custom_target(manpages ALL DEPENDS ${MT_MAN_DIR}/.stamp)

install(DIRECTORY ${MT_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        FILES_MATCHING PATTERN "*.1.gz")
install(DIRECTORY ${MT_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man8
        FILES_MATCHING PATTERN "*.8.gz")
