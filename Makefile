# Build, test and install Coffer. `make install PREFIX=/usr` (or ~/.local for one user) puts
# the binaries, the systemd user unit and the D-Bus activation file in place.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
UNITDIR = $(PREFIX)/lib/systemd/user
DBUSDIR = $(PREFIX)/share/dbus-1/services

.PHONY: build test bench install uninstall

build:
	swift build -c release --product cofferd
	swift build -c release --product coffer

test:
	./scripts/test

bench:
	swift run -c release coffer-bench

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DBUSDIR)
	install -m 0755 "$$(swift build -c release --show-bin-path)/cofferd" $(DESTDIR)$(BINDIR)/cofferd
	install -m 0755 "$$(swift build -c release --show-bin-path)/coffer" $(DESTDIR)$(BINDIR)/coffer
	sed 's|@bindir@|$(BINDIR)|g' packaging/cofferd.service.in > $(DESTDIR)$(UNITDIR)/cofferd.service
	sed 's|@bindir@|$(BINDIR)|g' dbus/org.freedesktop.secrets.service.in > $(DESTDIR)$(DBUSDIR)/org.freedesktop.secrets.service
	ln -sf cofferd.service $(DESTDIR)$(UNITDIR)/dbus-org.freedesktop.secrets.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cofferd $(DESTDIR)$(BINDIR)/coffer
	rm -f $(DESTDIR)$(UNITDIR)/cofferd.service $(DESTDIR)$(UNITDIR)/dbus-org.freedesktop.secrets.service
	rm -f $(DESTDIR)$(DBUSDIR)/org.freedesktop.secrets.service
