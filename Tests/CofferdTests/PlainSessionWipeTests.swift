import Foundation
import Testing

/// A password or a secret that comes over a `plain` session is wiped once used, as one that
/// comes encrypted over a DH session is: after a plain UnlockWithMasterPassword and a plain
/// CreateItem, and a few calls after them, neither is anywhere in cofferd's memory.
@Suite(.timeLimit(.minutes(5))) struct PlainSessionWipeTests {
    @Test func plainPasswordsAndSecretsAreWipedOnceUsed() throws {
        let password = "plainwipe-" + UUID().uuidString
        let secret = "plainsecret-" + UUID().uuidString
        let client = """
            python3 - <<'EOF'
            import dbus
            bus = dbus.SessionBus()
            service = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
            api = dbus.Interface(service, "org.freedesktop.Secret.Service")
            _, session = api.OpenSession("plain", dbus.String("", variant_level=1))
            login = "/org/freedesktop/secrets/collection/login"
            api.Lock([login])
            internal = dbus.Interface(service, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface")
            internal.UnlockWithMasterPassword(login, dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"\(password)"), "text/plain")))
            collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", login), "org.freedesktop.Secret.Collection")
            collection.CreateItem({"org.freedesktop.Secret.Item.Label": "Plain",
                                   "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"plain": "yes"}, signature="ss")},
                                  dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"\(secret)"), "text/plain")), False)
            for n in range(5):
                api.SearchItems({"plain": str(n)})
            EOF
            """
        let scan = try MemoryScan.run(password: password, client: client, needles: ["plainwipe-", "plainsecret-"])
        #expect(scan.found.isEmpty, "still in cofferd's memory: \(scan)")
    }
}
