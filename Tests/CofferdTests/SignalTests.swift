import CofferCrypto
import DBusKit
import Foundation
import Synchronization
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Change notifications: the spec's signals and PropertiesChanged, as a second client sees them.
@Suite(.timeLimit(.minutes(10))) struct SignalTests {
    @Test func collectionSignals() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let session = try c.library.openSession()

        let work = try c.library.createCollection(label: "Signals", password: SecureBytes("pw"), session: session)
        let created = watcher.waitForSignal(ServiceInterface.Signal.collectionCreated, path: SecretPath.service, interface: ServiceInterface.name)
        #expect(created?.objectArgument == work)
        let collections = watcher.waitForSignal("PropertiesChanged", path: SecretPath.service) {
            $0.arguments.first == .string(ServiceInterface.name)
        }
        #expect(collections != nil, "no PropertiesChanged(Collections)")
        if let changed = collections?.arguments[1].variantDictionary?[ServiceInterface.Property.collections]?.objectPathArray {
            #expect(Set(changed) == [SecretPath.login, SecretPath.sessionCollection, work])
        }

        try c.library.setLabel(of: work, to: "Renamed")
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionChanged, path: SecretPath.service)?.objectArgument == work)
        let label = watcher.waitForSignal("PropertiesChanged", path: work) { $0.arguments.first == .string(CollectionInterface.name) }
        #expect(label?.arguments[1].variantDictionary?[CollectionInterface.Property.label] == .string("Renamed"))

        // Locking and unlocking: Locked changes and CollectionChanged.
        _ = try c.library.lock([work])
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionChanged, path: SecretPath.service)?.objectArgument == work)
        let locked = watcher.waitForSignal("PropertiesChanged", path: work) {
            $0.arguments[1].variantDictionary?[CollectionInterface.Property.locked] != nil
        }
        #expect(locked?.arguments[1].variantDictionary?[CollectionInterface.Property.locked] == .boolean(true))
        try c.library.unlock(work, password: SecureBytes("pw"), session: session)
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionChanged, path: SecretPath.service)?.objectArgument == work)
        let unlocked = watcher.waitForSignal("PropertiesChanged", path: work) {
            $0.arguments[1].variantDictionary?[CollectionInterface.Property.locked] != nil
        }
        #expect(unlocked?.arguments[1].variantDictionary?[CollectionInterface.Property.locked] == .boolean(false))

        try c.library.deleteCollection(work)
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionDeleted, path: SecretPath.service)?.objectArgument == work)
        let after = watcher.waitForSignal("PropertiesChanged", path: SecretPath.service) {
            $0.arguments[1].variantDictionary?[ServiceInterface.Property.collections] != nil
        }
        #expect(after?.arguments[1].variantDictionary?[ServiceInterface.Property.collections]?.objectPathArray.map(Set.init) == [SecretPath.login, SecretPath.sessionCollection])
    }

    @Test func itemSignals() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let session = try c.library.openSession()

        let item = try c.createItem(label: "sig", attributes: ["s": "1"], secret: "x", session: session)
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemCreated, path: SecretPath.login, interface: CollectionInterface.name)?.objectArgument == item)
        let items = watcher.waitForSignal("PropertiesChanged", path: SecretPath.login) {
            $0.arguments.first == .string(CollectionInterface.name)
        }
        let announced = (items?.arguments[1].variantDictionary?[CollectionInterface.Property.items] != nil) || (items?.arguments[2].stringArray?.contains(CollectionInterface.Property.items) ?? false)
        #expect(announced, "Items change not announced: \(String(describing: items))")

        // Through secret-tool (the alias path): signals still carry real paths.
        try f.store(label: "tool", ["s": "2"], secret: Array("y".utf8))
        let toolItem = watcher.waitForSignal(CollectionInterface.Signal.itemCreated, interface: CollectionInterface.name)
        #expect(toolItem?.path == SecretPath.login)
        #expect(toolItem?.objectArgument?.parent == SecretPath.login)

        try c.library.setLabel(ofItem: item, to: "relabelled")
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemChanged, path: SecretPath.login)?.objectArgument == item)
        let label = watcher.waitForSignal("PropertiesChanged", path: item) { $0.arguments.first == .string(ItemInterface.name) }
        #expect(label?.arguments[1].variantDictionary?[CollectionInterface.Property.label] == .string("relabelled"))

        try c.library.setAttributes(of: item, to: ["s": "3"])
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemChanged, path: SecretPath.login)?.objectArgument == item)
        let attributes = watcher.waitForSignal("PropertiesChanged", path: item) {
            $0.arguments[1].variantDictionary?[ItemInterface.Property.attributes] != nil
        }
        #expect(attributes?.arguments[1].variantDictionary?[ItemInterface.Property.attributes]?.stringDictionary == ["s": "3"])

        // Replacing in place announces the item as changed, not as created.
        watcher.clearSignals()
        let same = try c.createItem(label: "again", attributes: ["s": "3"], secret: "z", session: session, replace: true)
        #expect(same == item)
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemChanged, path: SecretPath.login)?.objectArgument == item)
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemCreated, path: SecretPath.login, timeout: 0.3) == nil)

        try c.library.deleteItem(item)
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemDeleted, path: SecretPath.login, interface: CollectionInterface.name)?.objectArgument == item)
        #expect(watcher.waitForSignal("PropertiesChanged", path: SecretPath.login) { $0.arguments.first == .string(CollectionInterface.name) } != nil)

        // Locking the collection tells each item's proxy too, as gnome-keyring does.
        let kept = try c.createItem(label: "kept", attributes: ["s": "4"], secret: "k", session: session)
        watcher.clearSignals()
        _ = try c.library.lock([SecretPath.login])
        #expect(watcher.waitForSignal(ServiceInterface.Signal.collectionChanged, path: SecretPath.service)?.objectArgument == SecretPath.login)
        let itemLocked = watcher.waitForSignal("PropertiesChanged", path: kept) { $0.arguments.first == .string(ItemInterface.name) }
        #expect(itemLocked?.arguments[1].variantDictionary?[CollectionInterface.Property.locked] == .boolean(true))
        #expect(watcher.waitForSignal(CollectionInterface.Signal.itemChanged, path: SecretPath.login) { $0.objectArgument == kept } != nil)
        // No signal ever carries an alias path.
        #expect(!watcher.signals.contains { $0.path.rawValue.contains("/aliases/") || ($0.objectArgument?.rawValue.contains("/aliases/") ?? false) })
    }

    /// Many items are announced in rounds between other calls; every one is told.
    @Test func lockingAManyItemCollectionTellsEveryItem() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.library.openSession()
        var items: Set<ObjectPath> = []
        for n in 0..<600 {
            items.insert(try c.createItem(label: "bulk \(n)", attributes: ["n": String(n)], secret: "s", session: session))
        }
        let watcher = try f.newClient()
        _ = try c.library.lock([SecretPath.login])
        var told: Set<ObjectPath> = []
        _ = watcher.waitForSignals(timeout: 20) { signals in
            told = Set(signals.filter {
                $0.member == "PropertiesChanged" && $0.arguments.first == .string(ItemInterface.name)
                    && $0.arguments[1].variantDictionary?[ItemInterface.Property.locked] == .boolean(true)
            }.map(\.path))
            return told.count >= items.count
        }
        #expect(told == items)
    }
}
