# Run by `cmake --install` (and so by CPack), where CMAKE_INSTALL_PREFIX is the prefix installed to
# (/usr for the Debian package): the systemd units, with ExecStart and their paths pointing at this
# prefix; the sysusers entry of the controller's user; and the example configuration as
# /etc/headroom/agent.env and row.yaml (the package's conffiles). An existing configuration file
# is never overwritten. HEADROOM_SOURCE_DIR: set by cmake/Packaging.cmake.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(unit_dir "/lib/systemd/system")  # Debian 12's systemdsystemunitdir
  set(sysusers_dir "/usr/lib/sysusers.d")
  set(etc_dir "/etc")
else()
  set(unit_dir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  set(sysusers_dir "${CMAKE_INSTALL_PREFIX}/lib/sysusers.d")
  set(etc_dir "${CMAKE_INSTALL_PREFIX}/etc")
endif()

function(headroom_install_text source destination)
  file(READ "${HEADROOM_SOURCE_DIR}/${source}" text)
  string(REPLACE "/usr/bin/headroom" "${CMAKE_INSTALL_PREFIX}/bin/headroom" text "${text}")
  string(REPLACE "/usr/share/doc/headroom/" "${CMAKE_INSTALL_PREFIX}/share/doc/headroom/" text
                 "${text}")
  string(REPLACE "/etc/headroom/" "${etc_dir}/headroom/" text "${text}")
  message(STATUS "Installing: $ENV{DESTDIR}${destination}")
  file(WRITE "$ENV{DESTDIR}${destination}" "${text}")
endfunction()

foreach(unit headroom-agent.service headroom-controller.service)
  headroom_install_text(deploy/systemd/${unit} "${unit_dir}/${unit}")
endforeach()
headroom_install_text(deploy/systemd/headroom.sysusers.conf "${sysusers_dir}/headroom.conf")

foreach(pair "deploy/systemd/headroom-agent.env;agent.env" "deploy/controller/row.yaml;row.yaml")
  list(GET pair 0 source)
  list(GET pair 1 name)
  set(destination "${etc_dir}/headroom/${name}")
  if(EXISTS "$ENV{DESTDIR}${destination}")
    message(STATUS "Up-to-date (kept, not overwritten): $ENV{DESTDIR}${destination}")
  else()
    headroom_install_text(${source} "${destination}")
  endif()
endforeach()
