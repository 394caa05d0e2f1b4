/// Rows printed as aligned columns, two spaces apart. The last column (free text such as a
/// label) is not padded, so lines carry no trailing blanks.
enum TextTable {
    static func lines(_ rows: [[String]]) -> [String] {
        var widths = Widths()
        rows.forEach { widths.measure($0) }
        return rows.map(widths.line)
    }

    /// The columns' widths, measured row by row (so that rows can be printed as they come, a
    /// block at a time: `coffer log` over a large log).
    struct Widths {
        private var widths: [Int] = []

        /// Makes room for `row`.
        mutating func measure(_ row: [String]) {
            for (column, cell) in row.enumerated() {
                if column == widths.count { widths.append(0) }
                widths[column] = max(widths[column], cell.count)
            }
        }

        /// `row` aligned to the rows measured; its last column unpadded.
        func line(_ row: [String]) -> String {
            var out: [UInt8] = []
            append(row, to: &out)
            return String(decoding: out, as: UTF8.self)
        }

        /// Appends `row` as `line` makes it, with a newline.
        func append(_ row: [String], newline: Bool = false, to out: inout [UInt8]) {
            for (column, cell) in row.enumerated() {
                out += cell.utf8
                if column < widths.count - 1 && column < row.count - 1 {
                    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: max(0, widths[column] - cell.count) + 2))
                }
            }
            if newline { out.append(0x0A) }
        }
    }
}
