import DBusKit
import Foundation
import Synchronization
import Testing

/// Change notifications: the spec's signals and PropertiesChanged, as a second client sees them.
@Suite(.timeLimit(.minutes(10))) struct SignalTests {
    @Test func collectionSignals() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let session = try c.openDH()

        let work = try c.createWithMasterPassword(label: "Signals", password: "pw", session: session)
        let created = watcher.waitForSignal("CollectionCreated", path: SS.service, interface: SS.serviceInterface)
        #expect(created?.objectArgument == work)
        let collections = watcher.waitForSignal("PropertiesChanged", path: SS.service) {
            $0.arguments.first == .string(SS.serviceInterface)
        }
        #expect(collections != nil, "no PropertiesChanged(Collections)")
        if let changed = collections?.arguments[1].variantDictionary?["Collections"]?.objectPathArray {
            #expect(Set(changed) == [SS.login, SS.sessionCollection, work])
        }

        try c.set(work, SS.collectionInterface, "Label", .string("Renamed"))
        #expect(watcher.waitForSignal("CollectionChanged", path: SS.service)?.objectArgument == work)
        let label = watcher.waitForSignal("PropertiesChanged", path: work) { $0.arguments.first == .string(SS.collectionInterface) }
        #expect(label?.arguments[1].variantDictionary?["Label"] == .string("Renamed"))

        // Locking and unlocking: Locked changes and CollectionChanged.
        try c.service("Lock", [.objectPathArray([work])])
        #expect(watcher.waitForSignal("CollectionChanged", path: SS.service)?.objectArgument == work)
        let locked = watcher.waitForSignal("PropertiesChanged", path: work) {
            $0.arguments[1].variantDictionary?["Locked"] != nil
        }
        #expect(locked?.arguments[1].variantDictionary?["Locked"] == .boolean(true))
        try c.unlockWithMasterPassword(work, password: "pw", session: session)
        #expect(watcher.waitForSignal("CollectionChanged", path: SS.service)?.objectArgument == work)
        let unlocked = watcher.waitForSignal("PropertiesChanged", path: work) {
            $0.arguments[1].variantDictionary?["Locked"] != nil
        }
        #expect(unlocked?.arguments[1].variantDictionary?["Locked"] == .boolean(false))

        try c.call(work, SS.collectionInterface, "Delete")
        #expect(watcher.waitForSignal("CollectionDeleted", path: SS.service)?.objectArgument == work)
        let after = watcher.waitForSignal("PropertiesChanged", path: SS.service) {
            $0.arguments[1].variantDictionary?["Collections"] != nil
        }
        #expect(after?.arguments[1].variantDictionary?["Collections"]?.objectPathArray.map(Set.init) == [SS.login, SS.sessionCollection])
    }

    @Test func itemSignals() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let watcher = try f.newClient()
        let session = try c.openDH()

        let item = try c.createItem(label: "sig", attributes: ["s": "1"], secret: "x", session: session)
        #expect(watcher.waitForSignal("ItemCreated", path: SS.login, interface: SS.collectionInterface)?.objectArgument == item)
        let items = watcher.waitForSignal("PropertiesChanged", path: SS.login) {
            $0.arguments.first == .string(SS.collectionInterface)
        }
        let announced = (items?.arguments[1].variantDictionary?["Items"] != nil) || (items?.arguments[2].stringArray?.contains("Items") ?? false)
        #expect(announced, "Items change not announced: \(String(describing: items))")

        // Through secret-tool (the alias path): signals still carry real paths.
        try f.store(label: "tool", ["s": "2"], secret: Array("y".utf8))
        let toolItem = watcher.waitForSignal("ItemCreated", interface: SS.collectionInterface)
        #expect(toolItem?.path == SS.login)
        #expect(toolItem?.objectArgument?.parent == SS.login)

        try c.set(item, SS.itemInterface, "Label", .string("relabelled"))
        #expect(watcher.waitForSignal("ItemChanged", path: SS.login)?.objectArgument == item)
        let label = watcher.waitForSignal("PropertiesChanged", path: item) { $0.arguments.first == .string(SS.itemInterface) }
        #expect(label?.arguments[1].variantDictionary?["Label"] == .string("relabelled"))

        try c.set(item, SS.itemInterface, "Attributes", .stringDictionary(["s": "3"]))
        #expect(watcher.waitForSignal("ItemChanged", path: SS.login)?.objectArgument == item)
        let attributes = watcher.waitForSignal("PropertiesChanged", path: item) {
            $0.arguments[1].variantDictionary?["Attributes"] != nil
        }
        #expect(attributes?.arguments[1].variantDictionary?["Attributes"]?.stringDictionary == ["s": "3"])

        // Replacing in place announces the item as changed, not as created.
        watcher.clearSignals()
        let same = try c.createItem(label: "again", attributes: ["s": "3"], secret: "z", session: session, replace: true)
        #expect(same == item)
        #expect(watcher.waitForSignal("ItemChanged", path: SS.login)?.objectArgument == item)
        #expect(watcher.waitForSignal("ItemCreated", path: SS.login, timeout: 0.3) == nil)

        try c.call(item, SS.itemInterface, "Delete")
        #expect(watcher.waitForSignal("ItemDeleted", path: SS.login, interface: SS.collectionInterface)?.objectArgument == item)
        #expect(watcher.waitForSignal("PropertiesChanged", path: SS.login) { $0.arguments.first == .string(SS.collectionInterface) } != nil)

        // Locking the collection tells each item's proxy too, as gnome-keyring does.
        let kept = try c.createItem(label: "kept", attributes: ["s": "4"], secret: "k", session: session)
        watcher.clearSignals()
        try c.service("Lock", [.objectPathArray([SS.login])])
        #expect(watcher.waitForSignal("CollectionChanged", path: SS.service)?.objectArgument == SS.login)
        let itemLocked = watcher.waitForSignal("PropertiesChanged", path: kept) { $0.arguments.first == .string(SS.itemInterface) }
        #expect(itemLocked?.arguments[1].variantDictionary?["Locked"] == .boolean(true))
        #expect(watcher.waitForSignal("ItemChanged", path: SS.login) { $0.objectArgument == kept } != nil)
        // No signal ever carries an alias path.
        #expect(!watcher.signals.withLock { $0 }.contains { $0.path.rawValue.contains("/aliases/") || ($0.objectArgument?.rawValue.contains("/aliases/") ?? false) })
    }

    /// Many items are announced in rounds between other calls; every one is told.
    @Test func lockingAManyItemCollectionTellsEveryItem() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        let c = f.client!
        let session = try c.openDH()
        var items: Set<ObjectPath> = []
        for n in 0..<600 {
            items.insert(try c.createItem(label: "bulk \(n)", attributes: ["n": String(n)], secret: "s", session: session))
        }
        let watcher = try f.newClient()
        try c.service("Lock", [.objectPathArray([SS.login])])
        var told: Set<ObjectPath> = []
        _ = eventually(timeout: 20) {
            for signal in watcher.signals.withLock({ $0 }) where signal.member == "PropertiesChanged"
                && signal.arguments.first == .string(SS.itemInterface)
                && signal.arguments[1].variantDictionary?["Locked"] == .boolean(true) {
                told.insert(signal.path)
            }
            return told.count >= items.count
        }
        #expect(told == items)
    }
}
