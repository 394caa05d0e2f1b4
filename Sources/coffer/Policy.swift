import ArgumentParser
import CofferCore

extension AccessPolicy: ExpressibleByArgument {}

struct Policy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Show or set which applications may read a collection's secrets.",
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

        EXAMPLES
          coffer policy
          coffer policy --collection work strict
          echo "$PASSWORD" | coffer policy --password-stdin open
        """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The new policy: open, ask or strict.", valueName: "policy"))
    var policy: AccessPolicy?

    @OptionGroup var passwords: PasswordOptions

    func run() throws {
        let rules = try AccessRules(global, collection: target.collection, passwords: passwords)
        guard let policy else {
            let current = try rules.rules.policy
            Output.line("\(current.rawValue): \(current.summary)")
            return
        }
        let before = try rules.rules.policy
        try rules.change { $0.policy = policy }
        AccessAudit.record(.policy, in: rules, detail: "\(before.rawValue) -> \(policy.rawValue)")
        Output.line("collection '\(rules.collection)' is now \(policy.rawValue): \(policy.summary)")
    }
}
