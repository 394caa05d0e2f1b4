import ArgumentParser
import CofferCore

/// A span of time on the command line, as `DurationText` reads it: number-unit pairs,
/// units `s`, `m`, `h`, `d`, `w` (`90m`, `12h`, `30d`, `1d12h`).
struct DurationArgument: ExpressibleByArgument, Equatable {
    let seconds: UInt64

    init?(argument: String) {
        guard let seconds = DurationText.seconds(argument), seconds > 0, seconds < 100 * 365 * 86_400 else { return nil }
        self.seconds = seconds
    }

    static let help = "number-unit pairs with units s, m, h, d or w (e.g. 90m, 12h, 30d)"
}
