import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// An item belongs to the application that made it: under `ask` and `strict`, changing another
/// application's item (its secret, label, attributes, replacing or deleting it) is decided as a
/// read is — its creator, a grant that allows changes, the user, or a refusal. Creating items
/// and searching stay free; `open` lets everyone. secret-tool is the owner, this test process
/// the other application.
@Suite(.timeLimit(.minutes(10))) struct WriteGateTests {
    static let attributes = ["service": "gate", "account": "owner"]

    /// cofferd with an item secret-tool made, and the path of that item.
    static func world(pinentry: [String]? = nil, pinentryProgram: String? = nil) throws -> (DaemonFixture, ObjectPath) {
        let f = try DaemonFixture(pinentry: pinentry, pinentryProgram: pinentryProgram)
        try f.store(label: "Owned", attributes, secret: Array("original".utf8))
        let item = try #require(try f.client.library.search(attributes).unlocked.first)
        return (f, item)
    }

    /// Tries every kind of change to `item` as this process; returns the errors' messages (nil
    /// for a change that went through).
    static func tryEveryChange(_ f: DaemonFixture, _ item: ObjectPath) throws -> [String: String?] {
        let library = f.client.library
        let session = try library.openSession()
        func attempt(_ change: () throws -> Void) -> String? {
            do {
                try change()
                return nil
            } catch let error as DBusError {
                #expect(error.name == DBusError.Name.accessDenied, "\(error)")
                return error.message
            } catch {
                Issue.record("\(error)")
                return "\(error)"
            }
        }
        return [
            "secret": attempt { try library.setSecret(of: item, to: try SecureBytes(Array("taken".utf8)), session: session) },
            "label": attempt { try library.setLabel(ofItem: item, to: "Taken") },
            "attributes": attempt { try library.setAttributes(of: item, to: ["service": "gate", "account": "owner", "taken": "yes"]) },
            "replace": attempt {
                _ = try f.client.createItem(label: "Taken", attributes: ["service": "gate"], secret: "taken", session: session, replace: true)
            },
            "delete": attempt { try library.deleteItem(item) },
        ]
    }

    @Test func anotherApplicationsItemIsNotChangedWithoutConsent() throws {
        let (f, item) = try Self.world(pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        let refusals = try Self.tryEveryChange(f, item)
        for (change, message) in refusals {
            #expect(message?.contains("may not") == true && message?.contains("item login/1") == true, "\(change): \(String(describing: message))")
            #expect(message?.contains("--change") == true, "\(change) names the grant that would allow it: \(String(describing: message))")
        }
        #expect(refusals["delete"]??.contains("may not delete item login/1") == true)
        #expect(refusals["secret"]??.contains("may not change the secret of item login/1") == true)
        // Nothing changed; its owner still reads what it stored.
        #expect(try f.lookup(Self.attributes).stdout == "original")
        let snapshot = try f.client.library.item(item)
        #expect(snapshot.label == "Owned" && snapshot.attributes == Self.attributes, "\(snapshot)")
        // Creating and searching stay free.
        let session = try f.client.library.openSession()
        let mine = try f.client.createItem(label: "Mine", attributes: ["service": "gate", "account": "me"], secret: "mine", session: session)
        #expect(try f.client.library.search(["service": "gate"]).unlocked.count == 2)
        // Its own item it changes freely.
        try f.client.library.setLabel(ofItem: mine, to: "Still mine")
        try f.client.library.deleteItem(mine)
        // The refusals are in the audit log, as write and delete (those within a minute of the
        // first of their action folded into a count, written as cofferd stops).
        #expect(f.stopDaemon()?.exitCode == 0)
        let denied = try f.auditLog().filter { $0["outcome"] as? String == "denied" }
        func count(_ action: String) -> Int {
            denied.filter { $0["action"] as? String == action }.map { $0["repeated"] as? Int ?? 1 }.reduce(0, +)
        }
        #expect(count("write") == 4 && count("delete") == 1, "\(denied)")
    }

    @Test func theOwnerChangesItsItemFreely() throws {
        let (f, _) = try Self.world(pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        try f.store(label: "Owned again", Self.attributes, secret: Array("second".utf8))   // secret-tool store replaces
        #expect(try f.lookup(Self.attributes).stdout == "second")
        #expect(try f.client.library.search(Self.attributes).unlocked.count == 1)
        #expect(try f.secretTool(["clear"] + DaemonFixture.flatten(Self.attributes)).exitCode == 0)
        #expect(try f.client.library.search(Self.attributes).unlocked.isEmpty)
    }

    @Test func askShowsWhatChangesAndAlwaysAllowGrantsChangesOnly() throws {
        let (f, item) = try Self.world(pinentry: ["ONCE"])
        defer { f.shutdown() }
        try f.client.library.setLabel(ofItem: item, to: "Relabelled once")
        #expect(f.pinentryLogText.contains("SETTITLE Allow a change to a keyring item?"), "\(f.pinentryLogText)")
        #expect(f.pinentryLogText.contains("wants to rename the item 'Owned' in the keyring"), "\(f.pinentryLogText)")
        try f.setPinentryScript(["ALWAYS"])
        let session = try f.client.library.openSession()
        try f.client.library.setSecret(of: item, to: try SecureBytes(Array("changed".utf8)), session: session)
        #expect(try f.lookup(Self.attributes).stdout == "changed")
        // Remembered for changes: no dialog for the next one; reading still asks.
        try f.setPinentryScript(["DENY"])
        try f.client.library.setAttributes(of: item, to: Self.attributes.merging(["note": "granted"]) { $1 })
        let dialogs = f.pinentryLogText.split(separator: "\n").count { $0 == "CONFIRM" }
        #expect(dialogs == 2, "\(f.pinentryLogText)")
        _ = expectDBusError(DBusError.Name.accessDenied) { _ = try f.client.secretBytes(of: item, session: session) }
        #expect(f.pinentryLogText.split(separator: "\n").count { $0 == "CONFIRM" } == 3)
        let coffer = try #require(Executables.built("coffer"))
        let list = try ChildProcess(coffer, arguments: ["--data-dir", f.dataDir, "access", "list", "--password-stdin"],
                                    environment: f.environment(), stdin: Array((DaemonFixture.loginPassword + "\n").utf8)).wait(timeout: 60)
        #expect(list.stdout.contains("exe:\(Executables.thisProcess)  change  item login/1"), "\(list)")
    }

    @Test func strictRefusesWithoutAskingAndAChangeGrantAllowsChangesOnly() throws {
        let (f, item) = try Self.world(pinentry: ["ONCE"])
        defer { f.shutdown() }
        try f.coffer(["policy", "strict"])
        #expect(try Self.tryEveryChange(f, item).values.allSatisfy { $0 != nil })
        #expect(!f.pinentryLogText.contains("CONFIRM"))
        try f.grant(rights: ["--change"])
        try f.client.library.setLabel(ofItem: item, to: "Granted")
        _ = expectDBusError(DBusError.Name.accessDenied) {
            _ = try f.client.secretBytes(of: item, session: try f.client.library.openSession())
        }
        try f.client.library.deleteItem(item)
    }

    /// Deleting a collection deletes its items: refused while one of them is another's and
    /// nobody says yes; allowed once the policy lets every application change every item.
    @Test func aCollectionWithAnotherApplicationsItemIsNotDeleted() throws {
        let (f, item) = try Self.world(pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        let refused = expectDBusError(DBusError.Name.accessDenied) { try f.client.library.deleteCollection(SecretPath.login) }
        #expect(refused?.message.contains("may not delete, with their keyring, item login/1") == true, "\(String(describing: refused))")
        #expect(try f.client.library.item(item).label == "Owned")
        try f.coffer(["policy", "open"])
        try f.client.library.deleteCollection(SecretPath.login)
        #expect(try f.client.library.search(Self.attributes).unlocked.isEmpty)
    }

    @Test func openLetsEveryApplicationChangeEveryItem() throws {
        let (f, item) = try Self.world(pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        try f.coffer(["policy", "open"])
        let outcomes = try Self.tryEveryChange(f, item)
        #expect(outcomes.values.allSatisfy { $0 == nil }, "\(outcomes)")
    }

    /// CreateItem with replace replaces the items whose attributes include the given ones, as
    /// gnome-keyring and oo7 do (swiesend/secret-service's CollectionTest.createItem: an item
    /// with three attributes, then replace with one of them, expects one item).
    @Test func replaceCoversItemsWhoseAttributesIncludeTheGivenOnes() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        let three = ["service": "java", "account": "duke", "uri": "https://example.org"]
        let first = try c.createItem(label: "Three", attributes: three, secret: "first", session: session)
        let replaced = try c.createItem(label: "One", attributes: ["service": "java"], secret: "second", session: session, replace: true)
        #expect(replaced == first)
        let left = try c.library.search(["service": "java"]).unlocked
        #expect(left == [first], "\(left)")
        #expect(try c.secretBytes(of: first, session: session) == Array("second".utf8))
        // Two matching items of its own: one is kept (overwritten), the other deleted.
        _ = try c.createItem(label: "A", attributes: ["service": "twin", "n": "1"], secret: "a", session: session)
        _ = try c.createItem(label: "B", attributes: ["service": "twin", "n": "2"], secret: "b", session: session)
        _ = try c.createItem(label: "Both", attributes: ["service": "twin"], secret: "both", session: session, replace: true)
        #expect(eventually { (try? c.library.search(["service": "twin"]).unlocked.count) == 1 })
        // Without attributes, replace never covers the whole collection.
        _ = try c.createItem(label: "Bare", attributes: [:], secret: "bare", session: session, replace: true)
        #expect(try c.library.search(["service": "java"]).unlocked == [first])
    }

    /// A program that made a collection with a password it knows cannot make it the default,
    /// where secret-tool (and every libsecret client naming no collection) stores: the next
    /// secret would be in a file it can open. The user can, with the login password.
    @Test func aCollectionAnotherProgramMadeDoesNotBecomeTheDefault() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let library = f.client.library
        let trap = try library.createCollection(label: "Trap", password: try SecureBytes(Array("known".utf8)), session: try library.openSession())
        for target in [trap, SecretPath.none] {
            let refused = expectDBusError(DBusError.Name.accessDenied) { try library.setAlias("default", to: target) }
            #expect(refused?.message.contains("takes the password of 'login'") == true, "\(String(describing: refused))")
        }
        #expect(try library.readAlias("default") == SecretPath.login)
        try f.store(label: "Lured", ["service": "lure"], secret: Array("mine".utf8))
        #expect(try library.search(["service": "lure"]).unlocked.compactMap(\.parent) == [SecretPath.login])
        // Another name for it is the program's own business.
        try library.setAlias("traps", to: trap)
        #expect(try library.readAlias("traps") == trap)
        // The user, with the login password.
        _ = try f.coffer(["alias", "set", "default", "--collection", "Trap"])
        #expect(try library.readAlias("default") == trap)
    }
}
