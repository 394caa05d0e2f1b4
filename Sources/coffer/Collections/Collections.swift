import ArgumentParser
import CofferCore

struct Collections: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collections",
        abstract: "List the collections.",
        discussion: """
        Prints one line per collection: id, lock state, number of items, the aliases that \
        name it, and its label. No password is needed. With --json, prints an array of \
        objects {"id", "label", "created", "modified", "locked", "items", "aliases", \
        "recovery"} (times in seconds since 1970, UTC; "recovery" is null unless the \
        collection's file was repaired); [] when there is no collection.

        EXAMPLES
          coffer collections
          coffer collections --json
        """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the collections as a JSON array.")
    var json = false

    func run() throws {
        let access = try KeychainAccess(global)
        let aliases = try access.keychain.aliases()
        var rows: [(info: CollectionInfo, aliases: [String])] = []
        var unreadable: [CollectionID] = []
        let ids = try access.keychain.collectionIDs()
        for id in ids {
            do {
                let info = try access.keychain.info(id)
                rows.append((info, aliases.filter { $0.value == id }.map(\.key).sorted()))
            } catch {
                // One damaged file should not hide the others: list them, then fail.
                Output.note("warning: collection '\(id)': \(CLIError.from(error).message)")
                unreadable.append(id)
            }
        }
        if json {
            Output.write(Self.json(rows))
        } else if ids.isEmpty {
            Output.note("no collection yet. Create one with: \(access.command("create-collection login"))")
        } else if !rows.isEmpty {
            Self.table(rows).forEach(Output.line)
        }
        for row in rows {
            if let recovery = row.info.recovery { Output.note("warning: collection '\(row.info.id)' \(recovery)") }
        }
        if !unreadable.isEmpty {
            let names = unreadable.map { "'\($0)'" }.joined(separator: ", ")
            throw CLIError.storeFailure("cannot read collection \(names); see the warning above")
        }
    }

    private static func json(_ rows: [(info: CollectionInfo, aliases: [String])]) -> [UInt8] {
        var out: [UInt8] = Array("[".utf8)
        for (index, row) in rows.enumerated() {
            out.append(contentsOf: Array((index == 0 ? "\n  {\"id\": " : ",\n  {\"id\": ").utf8))
            Encode.jsonString(row.info.id.rawValue, to: &out)
            out.append(contentsOf: Array(", \"label\": ".utf8))
            Encode.jsonString(row.info.label, to: &out)
            out.append(contentsOf: Array(", \"created\": \(row.info.created), \"modified\": \(row.info.modified)".utf8))
            out.append(contentsOf: Array(", \"locked\": \(row.info.isLocked), \"items\": \(row.info.itemCount), \"aliases\": [".utf8))
            for (position, alias) in row.aliases.enumerated() {
                if position > 0 { out.append(contentsOf: Array(", ".utf8)) }
                Encode.jsonString(alias, to: &out)
            }
            out.append(contentsOf: Array("], \"recovery\": ".utf8))
            if let recovery = row.info.recovery {
                Encode.jsonString(recovery, to: &out)
            } else {
                out.append(contentsOf: Array("null".utf8))
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: Array((rows.isEmpty ? "]\n" : "\n]\n").utf8))
        return out
    }

    /// Aligned columns; the label (free text) comes last.
    private static func table(_ rows: [(info: CollectionInfo, aliases: [String])]) -> [String] {
        let cells = [["ID", "LOCKED", "ITEMS", "ALIASES", "LABEL"]] + rows.map { row in
            [row.info.id.rawValue, row.info.isLocked ? "yes" : "no", String(row.info.itemCount),
             row.aliases.isEmpty ? "-" : row.aliases.joined(separator: ","), Encode.display(row.info.label)]
        }
        return TextTable.lines(cells)
    }
}
