import ArgumentParser
import CofferCore

struct Collections: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collections",
        abstract: "List the collections.",
        discussion: """
        Prints one line per collection: id, lock state, number of items, the aliases that \
        name it, and its label. No password is needed. With --json, prints an array of \
        objects {"id", "label", "locked", "items", "aliases"}.

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
        for id in try access.keychain.collectionIDs() {
            do {
                let info = try access.keychain.info(id)
                rows.append((info, aliases.filter { $0.value == id }.map(\.key).sorted()))
            } catch {
                // One damaged file should not hide the others.
                Output.note("collection '\(id)': \(CLIError(error).message)")
            }
        }
        if json {
            var out: [UInt8] = Array("[".utf8)
            for (index, row) in rows.enumerated() {
                out.append(contentsOf: Array((index == 0 ? "\n  {\"id\": " : ",\n  {\"id\": ").utf8))
                Encode.jsonString(row.info.id.rawValue, to: &out)
                out.append(contentsOf: Array(", \"label\": ".utf8))
                Encode.jsonString(row.info.label, to: &out)
                out.append(contentsOf: Array(", \"locked\": \(row.info.isLocked), \"items\": \(row.info.itemCount), \"aliases\": [".utf8))
                for (position, alias) in row.aliases.enumerated() {
                    if position > 0 { out.append(contentsOf: Array(", ".utf8)) }
                    Encode.jsonString(alias, to: &out)
                }
                out.append(contentsOf: Array("]}".utf8))
            }
            out.append(contentsOf: Array((rows.isEmpty ? "]\n" : "\n]\n").utf8))
            Output.write(out)
            return
        }
        guard !rows.isEmpty else {
            Output.note("no collection yet. Create one with: \(access.command("create-collection login"))")
            return
        }
        let table = [["ID", "LOCKED", "ITEMS", "ALIASES", "LABEL"]] + rows.map { row in
            [row.info.id.rawValue, row.info.isLocked ? "yes" : "no", String(row.info.itemCount),
             row.aliases.isEmpty ? "-" : row.aliases.joined(separator: ","), Encode.display(row.info.label)]
        }
        let widths = (0..<4).map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            var line = ""
            for column in 0..<4 {
                line += row[column] + String(repeating: " ", count: widths[column] - row[column].count + 2)
            }
            Output.line(line + row[4])
        }
    }
}
