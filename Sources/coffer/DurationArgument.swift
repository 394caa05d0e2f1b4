import ArgumentParser

/// A span of time on the command line: a number and a unit, `s`, `m`, `h`, `d` or `w`
/// (`90m`, `12h`, `30d`).
struct DurationArgument: ExpressibleByArgument, Equatable {
    let seconds: UInt64

    init?(argument: String) {
        guard let unit = argument.last, let count = UInt64(argument.dropLast()), count > 0 else { return nil }
        let scale: UInt64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86_400
        case "w": scale = 604_800
        default: return nil
        }
        let (product, overflow) = count.multipliedReportingOverflow(by: scale)
        guard !overflow, product < 100 * 365 * 86_400 else { return nil }
        seconds = product
    }

    static let help = "a number and a unit: s, m, h, d or w (e.g. 90m, 12h, 30d)"
}
