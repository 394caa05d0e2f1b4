// End-to-end tests of cofferd: private dbus-daemon, the real daemon, real clients.
