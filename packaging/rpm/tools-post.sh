# lazybreaker-tools' %post: the user and group lazybreaker-agent.service
# runs as, and /run/lazybreaker for the registry files it links to the
# fleet, from the package's own /usr/lib/sysusers.d/lazybreaker.conf and
# /usr/lib/tmpfiles.d/lazybreaker.conf (what %sysusers_create_package and
# %tmpfiles_create_package do in a spec file). Kept on removal: files may
# still be owned by them.
if command -v systemd-sysusers >/dev/null 2>&1; then
  systemd-sysusers lazybreaker.conf
elif ! getent passwd lazybreaker >/dev/null; then
  getent group lazybreaker >/dev/null || groupadd --system lazybreaker
  useradd --system --gid lazybreaker --home-dir / --no-create-home \
    --shell /sbin/nologin --comment "lazybreaker fleet agent" lazybreaker
fi
if [ -d /run/systemd/system ] && command -v systemd-tmpfiles >/dev/null 2>&1; then
  systemd-tmpfiles --create lazybreaker.conf || :
fi
