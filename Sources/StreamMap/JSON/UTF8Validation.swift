/// Strings must be valid UTF-8 by Unicode's rules (§3.9): no overlong forms, no UTF-16 surrogates (U+D800–U+DFFF),
/// nothing above U+10FFFF. `StrictJSONScanner` checks every string and key in one pass before yajl sees the
/// bytes, and `JSONTreeBuilder` checks each string it builds with the UTF-8 kernel (`cjsonscan_valid_utf8`), which
/// applies the same rules as `String(validating:)` (`JSONLayerTests.stringsAreMadeAndRefusedAsTheStandardLibraryDoes`).
enum UTF8Validation {
    static let invalidStringMessage = "invalid UTF-8 in string"
}
