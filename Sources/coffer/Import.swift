import ArgumentParser

/// `coffer import …`: bring secrets in from another provider.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Bring secrets in from another Secret Service provider.",
        discussion: """
        Imports work on the store files (as with --data-dir), also while cofferd runs: it \
        sees the new items at once. Importing the same thing twice adds nothing: an item \
        whose label, attributes and secret are already in the collection is skipped.
        """,
        subcommands: [ImportGnomeKeyring.self]
    )
}
