import ArgumentParser
import CofferCore

/// What other applications may read of what an import from another provider brings: its
/// items have no creator (gnome-keyring and the Secret Service record none), so under `ask`
/// every application is asked before reading one, and under `strict` refused. `--policy` and
/// `--grant` choose at import time; without them, the import says what applications will see.
struct ImportAccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Set the policy of each collection imported into: open (every application reads every secret, as under gnome-keyring), ask or strict.",
                               valueName: "policy"))
    var policy: AccessPolicy?

    @Option(name: .customLong("grant"),
            help: ArgumentHelp("Let this application read the imported items without asking (repeatable): flatpak:APP-ID, snap:NAME, or a program's absolute path.",
                               valueName: "application"))
    var grants: [String] = []

    func validate() throws {
        for grant in grants { _ = try AccessRules.application(grant, granting: true) }
    }

    /// The applications of `--grant`.
    func applications() throws -> [Application] {
        try grants.map { try AccessRules.application($0, granting: true) }
    }

    /// Applies `--policy` to an existing collection `id` and `--grant` to the items imported
    /// into it (`imported`), each recorded in the audit log of the store at `directory`.
    func apply(to id: CollectionID, existing: Bool, imported: [ItemID], of keychain: Keychain, directory: String) throws {
        let applications = try applications()
        let changesPolicy = try existing && policy.map { try keychain.access(of: id).policy != $0 } ?? false
        guard changesPolicy || (!applications.isEmpty && !imported.isEmpty) else { return }
        let now = Clock.now()
        var before: AccessPolicy?
        try keychain.updateAccess(of: id) { access in
            if existing, let policy, access.policy != policy {
                before = access.policy
                access.policy = policy
            }
            for application in applications {
                for item in imported { access.add(AccessGrant(application: application, item: item, granted: now), now: now) }
            }
        }
        if let before, let policy {
            AccessAudit.record(.policy, in: id, of: keychain, directory: directory, detail: "\(before.rawValue) -> \(policy.rawValue) (coffer import)")
        }
        for application in applications {
            for item in imported {
                AccessAudit.record(.grant, in: id, of: keychain, directory: directory, application: application, item: item,
                                   detail: "coffer import --grant")
            }
        }
    }

    /// What other applications will see of `count` items without an owner in `id` under
    /// `policy` (nil when they read them freely), and how to choose otherwise.
    func note(_ count: Int, in id: CollectionID, under policy: AccessPolicy, dryRun: Bool) -> String? {
        guard count > 0, policy != .open, grants.isEmpty else { return nil }
        let items = count == 1 ? "1 item" : "\(count) items"
        let will = dryRun ? "would" : "will"
        let seen = policy == .ask
            ? "every application \(will) be asked before reading one (and refused where no dialog can be shown, as on a headless machine)"
            : "every application \(will) be refused them unless granted access"
        return "\(items) imported into '\(id)' \(dryRun ? "would have" : "have") no creator (the provider recorded none), and its policy is "
            + "\(policy.rawValue): \(seen). To let every application read them, as before: coffer policy --collection \(id) open "
            + "(or import with --policy open); to let chosen programs read them: coffer access grant /usr/bin/PROGRAM --collection \(id) "
            + "(or import with --grant /usr/bin/PROGRAM)"
    }
}
