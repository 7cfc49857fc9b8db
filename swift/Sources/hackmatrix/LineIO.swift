// Raw stdin/stdout plumbing for the CLI: lines in, lines out, no buffering
// surprises (each response is written with write(2) as soon as it is ready).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits standard input into lines. A line ends at "\n"; a "\r" before it is
/// dropped; a last line without "\n" is delivered at end of input. Lines of
/// any length that fits in memory are accepted (the buffer grows as needed).
struct LineReader {
    private var buffer: [UInt8] = []
    private var start = 0  // first byte of the line being assembled
    private var scanned = 0  // bytes before this contain no newline (from `start`)
    private var atEOF = false
    private let fd: Int32
    private var scratch = [UInt8](repeating: 0, count: 1 << 20)

    init(fd: Int32 = 0) {
        self.fd = fd
        buffer.reserveCapacity(1 << 16)
    }

    /// Calls `body` with the next line, or returns false at end of input.
    mutating func nextLine(_ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        while true {
            if let newline = findNewline() {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                buffer.withUnsafeBufferPointer { all in body(UnsafeBufferPointer(rebasing: all[start..<end])) }
                start = newline + 1
                scanned = start
                return true
            }
            if atEOF {
                guard start < buffer.count else { return false }
                var end = buffer.count
                if buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                buffer.withUnsafeBufferPointer { all in body(UnsafeBufferPointer(rebasing: all[start..<end])) }
                start = buffer.count
                scanned = start
                return true
            }
            fill()
        }
    }

    private mutating func findNewline() -> Int? {
        let count = buffer.count
        guard scanned < count else { return nil }
        let found: Int? = buffer.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress,
                let hit = memchr(base + scanned, Int32(UInt8(ascii: "\n")), count - scanned)
            else { return nil }
            return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
        }
        if found == nil { scanned = count }
        return found
    }

    /// Reads more input, first moving the unfinished line to the buffer's front.
    /// Data arrives through a fixed scratch block and is appended, so a long
    /// line costs amortised linear time (the array doubles as it grows).
    private mutating func fill() {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        let got: Int = scratch.withUnsafeMutableBytes { block in
            while true {
                let n = read(fd, block.baseAddress!, block.count)
                if n < 0 && errno == EINTR { continue }
                return n
            }
        }
        if got <= 0 {
            atEOF = true
            return
        }
        scratch.withUnsafeBytes { block in buffer.append(contentsOf: block.prefix(got)) }
    }
}

/// Writes bytes to a file descriptor completely, or reports failure.
func writeAll(_ fd: Int32, _ all: UnsafeBufferPointer<UInt8>) -> Bool {
    var offset = 0
    while offset < all.count {
        let n = write(fd, all.baseAddress! + offset, all.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += n
    }
    return true
}

/// Diagnostics go to stderr only (protocol.md §2).
func logLine(_ text: String) {
    let bytes = Array("hackmatrix: \(text)\n".utf8)
    _ = bytes.withUnsafeBufferPointer { writeAll(2, $0) }
}
