// The generators (random mappers, spec files and records) live in the StreamMapTestSupport target
// (Sources/StreamMapTestSupport/Generators.swift), shared with the fuzz target in Fuzz/. Re-exported here so the
// differential tests use them as before.
@_exported import StreamMapTestSupport
