# The Debian package (`./setup.sh package`, or `cpack -G DEB` in a build directory): what
# `cmake --install` installs, under /usr, with its shared-library dependencies worked out by
# dpkg-shlibdeps from the binaries themselves, so the package names what it really links.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "capsim")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "capsim")
set(CPACK_PACKAGE_CONTACT "capsim maintainers <capsim@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Capacity planning and cluster sizing for ML workloads")
# Lines under 80 columns (lintian: extended-description-line-too-long); CPack indents them.
set(CPACK_PACKAGE_DESCRIPTION
    "capsim answers capacity questions for ML workloads: which GPUs, how many nodes,\n"
    "which parallelism, how long training takes and what it costs, and whether\n"
    "inference meets its latency targets. It works from a hardware catalog in which\n"
    "every number has a source and a date, memory rules, analytic models checked\n"
    "against published measurements and a discrete-event simulator, and writes\n"
    "reports and the Kubernetes, Karpenter, GKE and Terraform files that run a plan.\n"
    "The package holds the capsim command, the capsim-gui desktop app, the catalog,\n"
    "the validation data and example scenarios.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)
# Installed components: the command line and its data; the desktop app when it is built.
set(CPACK_DEB_COMPONENT_INSTALL OFF)

# What Debian policy (and lintian) asks of a package besides its binaries and data, built
# into build/system/ and installed as the `system` component (the container image installs
# the `capsim` component only and needs none of it):
#   /usr/share/doc/capsim/copyright      machine-readable (DEP-5), packaging/debian/copyright
#   /usr/share/doc/capsim/changelog.gz   packaging/debian/changelog, gzip -9n (a native package)
#   /usr/share/man/man1/capsim*.1.gz     from each command's --help by help2man
#                                        (tools/man/man_pages.sh), when help2man is installed
#   the bash, zsh and fish completion scripts (`capsim completion SHELL`)
#   /usr/share/lintian/overrides/capsim  the lintian tags accepted, each with its reason
# The man pages and completions come from the built capsim, so they always describe it.
set(CAPSIM_DEBIAN_DIR "${CMAKE_SOURCE_DIR}/packaging/debian")
set(CAPSIM_SYSTEM_DIR "${CMAKE_BINARY_DIR}/system")
file(MAKE_DIRECTORY "${CAPSIM_SYSTEM_DIR}")
add_custom_command(OUTPUT "${CAPSIM_SYSTEM_DIR}/changelog.gz"
  COMMAND sh -c "gzip -9n -c \"$1\" > \"$2\"" sh "${CAPSIM_DEBIAN_DIR}/changelog" "${CAPSIM_SYSTEM_DIR}/changelog.gz"
  DEPENDS "${CAPSIM_DEBIAN_DIR}/changelog" VERBATIM)
set(CAPSIM_COMPLETIONS "${CAPSIM_SYSTEM_DIR}/capsim.bash" "${CAPSIM_SYSTEM_DIR}/_capsim" "${CAPSIM_SYSTEM_DIR}/capsim.fish")
add_custom_command(OUTPUT ${CAPSIM_COMPLETIONS}
  COMMAND sh -c "\"$1\" completion bash > \"$2\" && \"$1\" completion zsh > \"$3\" && \"$1\" completion fish > \"$4\""
          sh $<TARGET_FILE:capsim> ${CAPSIM_COMPLETIONS}
  DEPENDS capsim VERBATIM)
set(CAPSIM_SYSTEM_FILES "${CAPSIM_SYSTEM_DIR}/changelog.gz" ${CAPSIM_COMPLETIONS})
find_program(CAPSIM_HELP2MAN help2man)
# Not in a sanitizer build: nothing installs or packages it (its suite leaves ship.* out), and
# help2man would run the instrumented binaries some thirty times.
if(CAPSIM_HELP2MAN AND NOT CAPSIM_SANITIZE)
  set(capsim_man_programs $<TARGET_FILE:capsim>)
  set(capsim_man_depends capsim)
  if(CAPSIM_BUILD_GUI)
    list(APPEND capsim_man_programs $<TARGET_FILE:capsim-gui>)
    list(APPEND capsim_man_depends capsim-gui)
  endif()
  add_custom_command(OUTPUT "${CAPSIM_SYSTEM_DIR}/man1/capsim.1.gz"
    COMMAND bash "${CMAKE_SOURCE_DIR}/tools/man/man_pages.sh" "${CAPSIM_SYSTEM_DIR}/man1"
            "${CAPSIM_DEBIAN_DIR}/changelog" "${PROJECT_VERSION}" ${capsim_man_programs}
    DEPENDS ${capsim_man_depends} "${CMAKE_SOURCE_DIR}/tools/man/man_pages.sh" "${CAPSIM_DEBIAN_DIR}/changelog"
    COMMENT "capsim: man pages (help2man)" VERBATIM)
  list(APPEND CAPSIM_SYSTEM_FILES "${CAPSIM_SYSTEM_DIR}/man1/capsim.1.gz")
  install(DIRECTORY "${CAPSIM_SYSTEM_DIR}/man1" DESTINATION "${CMAKE_INSTALL_MANDIR}" COMPONENT system
          FILES_MATCHING PATTERN "*.1.gz")
elseif(NOT CAPSIM_SANITIZE)
  message(STATUS "capsim: no help2man; the man pages are not built (Debian: help2man)")
endif()
add_custom_target(capsim_system_files ALL DEPENDS ${CAPSIM_SYSTEM_FILES})
# Debian's hardening of what it ships (dpkg-buildflags, hardening=+bindnow): relocations are
# resolved at start-up and the GOT made read-only (lintian: hardening-no-bindnow). Link only,
# so nothing recompiles.
target_link_options(capsim PRIVATE LINKER:-z,relro LINKER:-z,now)
if(CAPSIM_BUILD_GUI)
  target_link_options(capsim-gui PRIVATE LINKER:-z,relro LINKER:-z,now)
endif()
install(FILES "${CAPSIM_DEBIAN_DIR}/copyright" "${CAPSIM_SYSTEM_DIR}/changelog.gz"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT system)
install(FILES "${CAPSIM_DEBIAN_DIR}/lintian-overrides" DESTINATION "${CMAKE_INSTALL_DATADIR}/lintian/overrides"
        RENAME capsim COMPONENT system)
install(FILES "${CAPSIM_SYSTEM_DIR}/capsim.bash" DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions"
        RENAME capsim COMPONENT system)
install(FILES "${CAPSIM_SYSTEM_DIR}/_capsim" DESTINATION "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions"
        COMPONENT system)
install(FILES "${CAPSIM_SYSTEM_DIR}/capsim.fish" DESTINATION "${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d"
        COMPONENT system)
# The JSON Schemas of the scenario input and of every command's JSON output (`capsim schema
# [--output NAME]`), where editors and CI jobs find them: /usr/share/capsim/schemas/.
install(FILES "${CMAKE_SOURCE_DIR}/docs/scenario.schema.json" DESTINATION "${CAPSIM_INSTALL_DATADIR}/schemas"
        COMPONENT capsim)
install(DIRECTORY "${CMAKE_SOURCE_DIR}/docs/output-schemas/" DESTINATION "${CAPSIM_INSTALL_DATADIR}/schemas"
        COMPONENT capsim FILES_MATCHING PATTERN "*.schema.json")
include(CPack)
