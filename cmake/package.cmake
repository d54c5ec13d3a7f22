# The Debian package (`./setup.sh package`, or `cpack -G DEB` in a build directory): what
# `cmake --install` installs, under /usr, with its shared-library dependencies worked out by
# dpkg-shlibdeps from the binaries themselves, so the package names what it really links.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "capsim")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "capsim")
set(CPACK_PACKAGE_CONTACT "capsim maintainers <capsim@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Capacity planning and cluster sizing for ML workloads")
set(CPACK_PACKAGE_DESCRIPTION
    "capsim answers capacity questions for ML workloads (which GPUs, how many nodes, which parallelism, how long, what it costs) from a sourced hardware catalog, memory rules, analytic models and a discrete-event simulator.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)
# Installed components: the command line and its data; the desktop app when it is built.
set(CPACK_DEB_COMPONENT_INSTALL OFF)
include(CPack)
