# Build, test and install Coffer.
#
#   make && sudo make install PREFIX=/usr/local      for every user of the machine
#   make install PREFIX=~/.local                     for yourself only
#
# PREFIX and DESTDIR are honoured (scripts/package-deb stages with DESTDIR). `make install`
# builds first when a source changed since the last build (scripts/build-release: release
# mode, Swift runtime linked in, man pages and completions generated).
PREFIX ?= /usr/local
# A literal ~ (from a shell that does not expand it in PREFIX=~/.local) is the home directory.
override PREFIX := $(patsubst ~%,$(HOME)%,$(PREFIX))
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/coffer
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d

# A prefix inside the home directory (~/.local) is one user's own installation.
HOME_PREFIX := $(filter $(HOME)/%,$(abspath $(PREFIX)))
# systemd looks for user units in ~/.local/share/systemd/user, and in lib/systemd/user
# under /usr and /usr/local.
USERUNITDIR ?= $(if $(HOME_PREFIX),$(DATADIR)/systemd/user,$(PREFIX)/lib/systemd/user)
# The D-Bus activation file goes where the session bus finds it (so that Coffer is started
# for org.freedesktop.secrets), except under /usr: there the bus would find it beside
# gnome-keyring's, in the same directory, and pick one of the two at random. Each user then
# chooses the provider (README.md, "Choosing the provider").
DBUSSERVICEDIR ?= $(if $(filter /usr,$(PREFIX)),$(DATADIR)/coffer,$(DATADIR)/dbus-1/services)
# xdg-desktop-portal's backends (coffer.portal: the Secret portal, served by whoever owns
# org.freedesktop.secrets). xdg-desktop-portal reads /usr/share/xdg-desktop-portal/portals
# only (or $XDG_DESKTOP_PORTAL_DIR): README.md, "The Secret portal".
PORTALDIR ?= $(DATADIR)/xdg-desktop-portal/portals
# The PAM module: in the system's module directory under /usr, else in $(PREFIX)/lib/security,
# which PAM stacks name by its full path. Not installed under the home directory: a module
# that logins load must not be one its user can replace.
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null)
PAMDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/$(MULTIARCH)/security,$(PREFIX)/lib/security)

RELEASE = .build/coffer-release
SOURCES = $(shell find Package.swift Sources -type f)
INSTALL_FILES = $(BINDIR)/cofferd $(BINDIR)/coffer $(LIBEXECDIR)/coffer/cofferd-data-dir \
	$(USERUNITDIR)/cofferd.service $(DBUSSERVICEDIR)/org.freedesktop.secrets.service \
	$(MANDIR)/man1/cofferd.1 $(MANDIR)/man1/coffer.1 \
	$(BASHCOMPDIR)/cofferd $(BASHCOMPDIR)/coffer $(ZSHCOMPDIR)/_cofferd $(ZSHCOMPDIR)/_coffer \
	$(FISHCOMPDIR)/cofferd.fish $(FISHCOMPDIR)/coffer.fish \
	$(PORTALDIR)/coffer.portal $(DOCDIR)/README.md $(DOCDIR)/LICENSE \
	$(if $(HOME_PREFIX),,$(PAMDIR)/pam_coffer.so)
SUBSTITUTE = sed -e 's|@bindir@|$(BINDIR)|g' -e 's|@libexecdir@|$(LIBEXECDIR)|g'

.PHONY: build test bench install uninstall

build: $(RELEASE)/stamp

$(RELEASE)/stamp: $(SOURCES) scripts/build-release
	./scripts/build-release

test:
	./scripts/test

bench:
	swift run -c release coffer-bench

install: $(RELEASE)/stamp
	install -d $(addprefix $(DESTDIR),$(sort $(dir $(INSTALL_FILES))))
	install -m 0755 -s $(RELEASE)/bin/cofferd $(RELEASE)/bin/coffer $(DESTDIR)$(BINDIR)/
	install -m 0755 packaging/cofferd-data-dir $(DESTDIR)$(LIBEXECDIR)/coffer/
	$(SUBSTITUTE) packaging/cofferd.service.in > $(DESTDIR)$(USERUNITDIR)/cofferd.service
	$(SUBSTITUTE) dbus/org.freedesktop.secrets.service.in > $(DESTDIR)$(DBUSSERVICEDIR)/org.freedesktop.secrets.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/cofferd.service $(DESTDIR)$(DBUSSERVICEDIR)/org.freedesktop.secrets.service
	install -m 0644 $(RELEASE)/man/cofferd.1 $(RELEASE)/man/coffer.1 $(DESTDIR)$(MANDIR)/man1/
	for command in cofferd coffer; do \
	  install -m 0644 $(RELEASE)/completions/$$command.bash $(DESTDIR)$(BASHCOMPDIR)/$$command && \
	  install -m 0644 $(RELEASE)/completions/$$command.zsh $(DESTDIR)$(ZSHCOMPDIR)/_$$command && \
	  install -m 0644 $(RELEASE)/completions/$$command.fish $(DESTDIR)$(FISHCOMPDIR)/$$command.fish || exit 1; \
	done
	install -m 0644 packaging/coffer.portal $(DESTDIR)$(PORTALDIR)/
	install -m 0644 README.md LICENSE $(DESTDIR)$(DOCDIR)/
	$(if $(HOME_PREFIX),,install -m 0644 -s $(RELEASE)/bin/pam_coffer.so $(DESTDIR)$(PAMDIR)/pam_coffer.so)

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALL_FILES))
	-rmdir $(DESTDIR)$(LIBEXECDIR)/coffer $(DESTDIR)$(DOCDIR) 2>/dev/null
