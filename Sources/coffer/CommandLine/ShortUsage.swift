import ArgumentParser

/// What `coffer` without a command prints: what it is, the commands in one compact list, and
/// where the rest is. It goes to stderr with the usage status (2), as grep or diff do when an
/// operand is missing, so that a script running `coffer $COMMAND` with an empty variable fails.
struct ShortUsage: Error {
    static var text: String {
        let names = CofferCommand.configuration.subcommands.map { $0._commandName }
        var lines = ["Coffer keeps secrets (passwords, tokens, keys) in encrypted collections.", "",
                     "usage: coffer [--data-dir DIR] COMMAND [OPTIONS]"]
        var line = "commands:"
        for (index, name) in names.enumerated() {
            let word = " " + name + (index < names.count - 1 ? "," : "")
            if line.count + word.count > 78 {
                lines.append(line)
                line = " "
            }
            line += word
        }
        lines.append(line)
        lines += ["", "Help on one command: coffer help COMMAND (or: coffer COMMAND --help)",
                  "Everything, with exit statuses and files: coffer --help"]
        return lines.joined(separator: "\n") + "\n"
    }
}
