import ArgumentParser
import CofferCore
import CofferStore

extension AccessPolicy: ExpressibleByArgument {}

struct Policy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Show or set which applications may read a collection's secrets, and when it locks by itself.",
        discussion: """
        Every item remembers the application that created it (a Flatpak app, a snap, or \
        the program's path). A collection's policy says who else may read its secrets:

          open    every application may read every secret (what other Secret Service
                  providers do; collections made before Coffer 0.3 have this policy)
          ask     an item's creator reads it freely; for any other application the
                  user is asked: Allow once, Always allow (remembered) or Deny.
                  The default for new collections. Where no dialog can be shown
                  (no pinentry, no terminal), the answer is Deny.
          strict  only an item's creator and applications granted access read it;
                  nobody is asked (see 'coffer access grant')

        Searching and reading labels and attributes are never restricted: applications \
        find items as before; only secrets are. Without a policy name this prints the \
        current one. Changing it (and showing it) needs the collection's password, asked \
        here even when cofferd has the collection unlocked, so that no program can change \
        it through the daemon; cofferd sees the change at once.

        LOCKING BY ITSELF
          An unlocked collection locks again after 15 minutes in which no secret was \
        read or written, when the screen locks, and before the computer suspends or \
        hibernates; always when the last login session of the user ends. Within 4 \
        hours of the password, a collection that locked by itself unlocks with a \
        fingerprint (fprintd) as well as with the password. The --lock-* and \
        --fingerprint-window options change that for one collection (or, with \
        --every-collection, for all without settings of their own); they are kept in \
        \(LockConfigurationFile.defaultPath(environment: ["HOME": "~"])) (or \
        $XDG_CONFIG_HOME/coffer/coffer.conf), need no password, and cofferd applies \
        them within a minute.

        EXAMPLES
          coffer policy
          coffer policy --collection work strict
          echo "$PASSWORD" | coffer policy --password-stdin open
          coffer policy --lock-after-idle 1h --lock-on-screen-lock no
          coffer policy --every-collection --lock-after-idle never   # a headless machine
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The new policy: open, ask or strict.", valueName: "policy"))
    var policy: AccessPolicy?

    @OptionGroup var passwords: PasswordOptions

    @OptionGroup(title: "Locking by itself") var locking: LockOptions

    func run() throws {
        let settingsFile = LockConfigurationFile(path: LockConfigurationFile.defaultPath())
        if !locking.changes.isEmpty {
            try changeLockSettings(in: settingsFile)
            guard policy != nil else { return }
        }
        let rules = try AccessRules(global, collection: target.collection, passwords: passwords)
        guard let policy else {
            let current = try rules.rules.policy
            Output.line("\(current.rawValue): \(current.summary)")
            for line in LockOptions.describe(try settingsFile.read().settings(for: rules.collection)) { Output.line(line) }
            return
        }
        let before = try rules.rules.policy
        try rules.change { $0.policy = policy }
        AccessAudit.record(.policy, in: rules, detail: "\(before.rawValue) -> \(policy.rawValue)")
        Output.line("collection '\(rules.collection)' is now \(policy.rawValue): \(policy.summary)")
    }

    /// `--lock-*`, `--fingerprint-window`: written to the settings file, then shown.
    private func changeLockSettings(in file: LockConfigurationFile) throws {
        if locking.everyCollection {
            guard target.collection == nil else {
                throw ValidationError("--every-collection and --collection name different places; give one of them")
            }
            try locking.apply(to: nil, in: file)
            Output.line("every collection without settings of its own now:")
            for line in LockOptions.describe(try file.read().everyCollectionSettings) { Output.line("  " + line) }
            return
        }
        let id = try KeychainAccess(global, direct: true).resolve(target.collection)
        try locking.apply(to: id, in: file)
        Output.line("collection '\(id)' now:")
        for line in LockOptions.describe(try file.read().settings(for: id)) { Output.line("  " + line) }
    }
}
