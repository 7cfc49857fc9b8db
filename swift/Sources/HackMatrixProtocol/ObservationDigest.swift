// The observation digest of protocol.md §9.2, which a client may ask for with
// `obsDigest` (§5.9): "sha256:" and 64 lower-case hex digits of the SHA-256 of
// the flat observation (1545 float32 values, each as 4 little-endian bytes,
// −0.0 written as +0.0). The parity harness checks it against the JAX engine,
// which puts the core's numeric encoder on the parity path.

import HackMatrixCore

public enum ObservationDigest {
    /// The digest of `state`'s observation (`ObservationEncoder.encodeFlat`).
    public static func digest(of state: GameState) -> String {
        digest(flat: ObservationEncoder.encodeFlat(state))
    }

    /// The digest of a flat observation.
    public static func digest(flat: [Float]) -> String {
        // SHA-256 reads its message as big-endian 32-bit words, so the little-endian
        // bytes of each float32 form the word `bitPattern.byteSwapped`.
        let words = flat.map { ($0 == 0 ? 0 : $0.bitPattern).byteSwapped }  // −0.0 and +0.0 hash alike
        return "sha256:" + hex(SHA256.hash(words: words))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func hex(_ bytes: [UInt8]) -> String {
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// SHA-256 of FIPS 180-4 over a whole message in memory (the toolchain has no
/// hash on Linux without an extra package, and the digest needs only this).
enum SHA256 {
    private static let initial: [UInt32] = [
        0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A, 0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19,
    ]
    private static let roundConstants: [UInt32] = [
        0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
        0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
        0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
        0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
        0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
        0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
        0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
        0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
    ]

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    /// The 32-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        // Padding: 0x80, zeros up to 56 mod 64, then the bit length as 8 big-endian bytes.
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let words = (0..<padded.count / 4).map { i in
            padded[4 * i..<4 * i + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        return compress(words)
    }

    /// The 32-byte digest of a message of whole big-endian 32-bit words (the
    /// observation digest's case: no bytes to regroup).
    static func hash(words message: [UInt32]) -> [UInt8] {
        var padded = message
        padded.append(0x8000_0000)
        while padded.count % 16 != 14 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 32
        padded.append(UInt32(truncatingIfNeeded: bitLength >> 32))
        padded.append(UInt32(truncatingIfNeeded: bitLength))
        return compress(padded)
    }

    /// Runs the compression function over padded 16-word blocks; the final hash value as bytes.
    private static func compress(_ padded: [UInt32]) -> [UInt8] {
        var h = initial
        var schedule = [UInt32](repeating: 0, count: 64)
        padded.withUnsafeBufferPointer { m in
            schedule.withUnsafeMutableBufferPointer { w in
                roundConstants.withUnsafeBufferPointer { k in
                    for block in stride(from: 0, to: m.count, by: 16) {
                        for i in 0..<16 { w[i] = m[block + i] }
                        for i in 16..<64 {
                            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                        }
                        var (a, b, c, d) = (h[0], h[1], h[2], h[3])
                        var (e, f, g, hh) = (h[4], h[5], h[6], h[7])
                        for i in 0..<64 {
                            let sigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                            let choice = (e & f) ^ (~e & g)
                            let t1 = hh &+ sigma1 &+ choice &+ k[i] &+ w[i]
                            let sigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                            let majority = (a & b) ^ (a & c) ^ (b & c)
                            let t2 = sigma0 &+ majority
                            (hh, g, f, e) = (g, f, e, d &+ t1)
                            (d, c, b, a) = (c, b, a, t1 &+ t2)
                        }
                        h[0] &+= a
                        h[1] &+= b
                        h[2] &+= c
                        h[3] &+= d
                        h[4] &+= e
                        h[5] &+= f
                        h[6] &+= g
                        h[7] &+= hh
                    }
                }
            }
        }
        var digest = [UInt8]()
        digest.reserveCapacity(32)
        for word in h {
            for shift in stride(from: 24, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return digest
    }
}
