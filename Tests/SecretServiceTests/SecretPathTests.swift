import DBusKit
import SecretServiceProtocol
import Testing

/// `SecretPath.parse` names exactly the objects the paths `SecretPath` writes, and nothing for
/// a second spelling of one of them.
@Suite struct SecretPathTests {
    static let login = "login"
    static let escaped = "my_keys"

    @Test(arguments: [
        ("/org/freedesktop/secrets", SecretPath.Target.service),
        ("/org/freedesktop/secrets/collection", .node),
        ("/org/freedesktop/secrets/aliases", .node),
        ("/org/freedesktop/secrets/session", .node),
        ("/org/freedesktop/secrets/prompt", .node),
        ("/org/freedesktop/secrets/collection/login", .collection(login)),
        ("/org/freedesktop/secrets/collection/my_5fkeys", .collection(escaped)),
        ("/org/freedesktop/secrets/aliases/default", .aliasCollection("default")),
        ("/org/freedesktop/secrets/session/s7", .session(7)),
        ("/org/freedesktop/secrets/prompt/p12", .prompt(12)),
        ("/org/freedesktop/secrets/session/s0", .session(0)),
        ("/org/freedesktop/secrets/collection/login/0", .item(login, 0)),
        ("/org/freedesktop/secrets/collection/login/18446744073709551615", .item(login, .max)),
        ("/org/freedesktop/secrets/aliases/default/42", .aliasItem("default", 42)),
    ])
    func namesWhatItWrites(path: String, target: SecretPath.Target) throws {
        #expect(SecretPath.parse(try ObjectPath(path)) == target)
    }

    @Test func readsBackThePathsItWrites() {
        #expect(SecretPath.parse(SecretPath.item(1234, inCollectionNamed: Self.escaped)) == .item(Self.escaped, 1234))
        #expect(SecretPath.parse(SecretPath.collection(named: Self.escaped)) == .collection(Self.escaped))
        #expect(SecretPath.parse(SecretPath.session(3)) == .session(3))
        #expect(SecretPath.parse(SecretPath.prompt(9)) == .prompt(9))
    }

    @Test(arguments: [
        "/",
        "/org/freedesktop",
        "/org/freedesktop/secretsX",
        "/org/freedesktop/secrets/items",
        "/org/freedesktop/secrets/collection/login/1/2",
        "/org/freedesktop/secrets/collection/login/01",
        "/org/freedesktop/secrets/collection/login/_2b1",
        "/org/freedesktop/secrets/collection/login/18446744073709551616",
        "/org/freedesktop/secrets/collection/login/x1",
        "/org/freedesktop/secrets/collection/my_5Fkeys",
        "/org/freedesktop/secrets/collection/ab_41",
        "/org/freedesktop/secrets/session/7",
        "/org/freedesktop/secrets/session/s",
        "/org/freedesktop/secrets/session/s007",
        "/org/freedesktop/secrets/prompt/p01",
        "/org/freedesktop/secrets/prompt/s1",
        "/org/freedesktop/secrets/session/s1/2",
        "/org/freedesktop/secrets/other/login/1",
    ])
    func namesNothingForAnotherSpelling(path: String) throws {
        #expect(SecretPath.parse(try ObjectPath(path)) == nil)
    }
}
