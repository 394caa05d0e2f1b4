import ArgumentParser

/// The command words on a command line (`coffer alias set …`), read without ArgumentParser so
/// that a mistyped one can be named, with the closest real command, when parsing fails.
enum CommandWords {
    /// Options of the commands that have subcommands that take a value (the next argument).
    private static let optionsWithValue: Set<String> = ["--data-dir", "--generate-completion-script"]

    /// The commands named so far, from `coffer` down (`coffer help …` read as `coffer …`); and
    /// the first word after them that names no subcommand of the last one, if it has any.
    static func read(_ arguments: [String]) -> (path: [any ParsableCommand.Type], unknown: String?) {
        var path: [any ParsableCommand.Type] = [CofferCommand.self]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            if argument.hasPrefix("-") {
                if optionsWithValue.contains(argument) { index += 1 }
                continue
            }
            let subcommands = path.last!.configuration.subcommands
            guard !subcommands.isEmpty else { break }
            if path.count == 1 && argument == "help" { continue }
            guard let next = subcommands.first(where: { $0._commandName == argument }) else { return (path, argument) }
            path.append(next)
        }
        return (path, nil)
    }

    /// "coffer alias set" for a path.
    static func spelled(_ path: [any ParsableCommand.Type]) -> String {
        path.map { $0._commandName }.joined(separator: " ")
    }

    /// One line for a word that names no command: the closest command when one is close.
    static func unknownCommandMessage(_ arguments: [String]) -> String? {
        let (path, word) = read(arguments)
        guard let word else { return nil }
        let parent = spelled(path)
        let prefix = parent == "coffer" ? "" : parent.dropFirst("coffer ".count) + " "
        var names = path.last!.configuration.subcommands.map { $0._commandName }
        if path.count == 1 { names.append("help") }
        let list = "list them with: \(parent) --help"
        guard let closest = closest(to: word, among: names) else {
            return "unknown command '\(prefix)\(Encode.display(word))' (\(list))"
        }
        return "unknown command '\(prefix)\(Encode.display(word))'; did you mean '\(prefix)\(closest)'? (\(list))"
    }

    /// The name nearest to `word` by edit distance (a swap of two neighbours counting one),
    /// if it is within a third of the word's length (at least 1): no guess when nothing is close.
    static func closest(to word: String, among names: [String]) -> String? {
        let limit = max(1, word.count / 3)
        let scored = names.map { ($0, editDistance(word.lowercased(), $0)) }.filter { $0.1 <= limit }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and
    /// transpositions of adjacent characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
