# What `cmake --install` puts under a prefix: the shared and static
# libraries, the headers, the CLI, a pkg-config file and a CMake package
# (find_package(ctxdb) -> ctxdb::ctxdb, and ctxdb::ctxdb_static carrying
# its dependencies). The package's targets are written by hand rather than
# exported: the engine is an object library whose link interface names
# build-tree targets, and the static archive's users need only the system
# libraries it was built against, which the config finds the same way.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The installed CLI finds the installed library next to it.
set_target_properties(ctxdb_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

install(TARGETS ctxdb ctxdb_static ctxdb_cli
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(FILES include/ctxdb/ctxdb.h include/ctxdb/ctxdb.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ctxdb COMPONENT development)

# The prefix as seen from the .pc file, so that an installed tree can move.
file(RELATIVE_PATH CTXDB_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" CTXDB_PC_TO_PREFIX "${CTXDB_PC_TO_PREFIX}")
configure_file(cmake/ctxdb.pc.in ${CMAKE_BINARY_DIR}/ctxdb.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ctxdb.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

set(CTXDB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ctxdb)
configure_package_config_file(cmake/ctxdbConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ctxdbConfig.cmake
  INSTALL_DESTINATION ${CTXDB_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
# The ABI is the compatibility promise: any 0.x.y with the same ABI serves.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ctxdbConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ctxdbConfig.cmake ${CMAKE_BINARY_DIR}/ctxdbConfigVersion.cmake
        DESTINATION ${CTXDB_CMAKE_DIR} COMPONENT development)
