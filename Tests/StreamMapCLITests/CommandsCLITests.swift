import Foundation
import StreamMap
import StreamMapTestSupport
import Testing

/// `check`, `explain`, help, version, usage errors and completion scripts.
@Suite("streammap check, explain, help")
struct CommandsCLITests {
    @Test func checkAcceptsAValidSpecWithoutReadingInput() throws {
        let spec = CLI.example("person.spec.json")
        let r = try CLI.run(["check", spec], stdin: "this is not read")
        #expect(r.stdout == "\(spec): ok\n")
        #expect(r.stderr == "")
        #expect(r.status == 0)
        let flags = try CLI.run(["check", "--spec", spec, "--field", "x=y"])
        #expect(flags.stdout == "\(spec) with flags: ok\n")
        #expect(flags.status == 0)
    }

    @Test func checkReportsEveryProblemWithItsPlace() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"age":{"to":"age","via":"integr"},"b":{"to":"c","type":"strin"}},"unmapped":"kep"}"#)
        let r = try CLI.run(["check", spec])
        #expect(r.stdout == "")
        #expect(r.stderrLines == [
            "streammap: \(spec): /fields/age/via: unknown mapper \"integr\" (did you mean \"integer\"?)",
            "streammap: \(spec): /fields/b/type: unknown type \"strin\" (did you mean \"string\"?) (declare custom types under \"types\")",
            "streammap: \(spec): /unmapped: expected \"drop\", \"keep\", \"inPlace\" or {\"keys\": STYLE, \"values\": MAPPER}, found string \"kep\"",
        ])
        #expect(r.status == 2)
    }

    @Test func checkWithReverseChecksTheReverse() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"a":{"to":"b","via":"toString"}}}"#)
        #expect(try CLI.run(["check", spec]).status == 0)
        let r = try CLI.run(["check", spec, "--reverse"])
        #expect(r.stderr.hasPrefix("streammap: \(spec): cannot reverse the mapping: "))
        #expect(r.stderr.contains("toString is not reversible"))
        #expect(r.status == 2)
    }

    @Test func checkNeedsSomethingToCheck() throws {
        let r = try CLI.run(["check"])
        #expect(r.status == 64)
        let unreadable = try CLI.run(["check", "/nonexistent/spec.json"])
        #expect(unreadable.stderr == "streammap: /nonexistent/spec.json: cannot read the spec: No such file or directory\n")
        #expect(unreadable.status == 2)
    }

    @Test func explainShowsOrderRequiredFieldsAndWhatStreams() throws {
        let spec = try CLI.temporaryFile(#"""
            {"fields":{
              "id":"id",
              "user.name":{"to":"user.name","via":"string","missing":"omit"},
              "created_at":{"to":"createdAt","via":[{"stringToDate":"twitter"},{"dateToNumber":"ms"}]},
              "user.id":"user.id",
              "tags":{"to":"tags","via":{"arrayOf":{"object":{"fields":{"text":"tag"}}}},"optional":true},
              "lang":{"to":"lang","via":{"first":["integer","string"]},"default":"en"}
            },"unmapped":{"keys":"camel"}}
            """#)
        let r = try CLI.run(["explain", spec])
        #expect(r.stderr == "")
        #expect(r.status == 0)
        #expect(r.stdout == """
            record: object, streamed
              #  destination  source      absent     null       mapper                              handling
              1  id           id          reject     reject     identity                            streamed
              2  user.name    user.name   omit       reject     type(string)                        streamed
              3  user.id      user.id     reject     reject     identity                            streamed
              4  createdAt    created_at  reject     reject     thread(stringToDate, dateToNumber)  streamed
              5  tags         tags        omit+warn  omit+warn  optional · arrayOf(object)          streamed
              6  lang         lang        "en"       "en"       first(type(integer), type(string))  materialized (first)
              other keys: passed through, keys renamed foundation.camel, values copied, streamed
              required: id, user.id, created_at
              tags: array, streamed; each element:
                tags[]: object, streamed
                  #  destination  source  absent  null    mapper    handling
                  1  tag          text    reject  reject  identity  streamed
                  other keys: dropped, skipped while parsing
                  required: text
            arrow columns (--to arrow): none: the mapping's result is not an object of named fields (unmapped keys are passed through ("unmapped": "keep"))

            """)
    }

    /// The Arrow columns `--to arrow` writes, as `explain` shows them: from the spec with the flags applied, and
    /// exactly the schema of the stream `--to arrow` writes (read back here); or why there are none.
    @Test func explainShowsTheArrowColumns() throws {
        let spec = CLI.root.appendingPathComponent("Benchmarks/specs/tweets.spec.json").path
        let r = try CLI.run(["explain", spec, "--field", "user.lang=language", "--type", "user.lang=string"])
        #expect(r.status == 0)
        #expect(r.stdout.hasSuffix("""
            arrow columns (--to arrow): id int64, idStr utf8, createdAtMs int64, text utf8, \
            user struct<id: int64, handle: utf8, followers: int64, verified: bool>, stats struct<retweets: int64, \
            likes: int64>, lang utf8, replyTo int64, language utf8

            """))
        let json = try CLI.run(["explain", spec, "--json"])
        let value = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let arrow = try #require(value["arrow"] as? [String: Any])
        let columns = try #require(arrow["columns"] as? [[String: String]])
        #expect(columns.map { $0["name"] } == ["id", "idStr", "createdAtMs", "text", "user", "stats", "lang", "replyTo"])
        #expect(columns[4]["type"] == "struct<id: int64, handle: utf8, followers: int64, verified: bool>")
        let untyped = try CLI.run(["explain", "--field", "id", "--field", "name", "--type", "id=integer", "--json"])
        let reason = try #require(try JSONSerialization.jsonObject(with: Data(untyped.stdout.utf8)) as? [String: Any])
        #expect((reason["arrow"] as? [String: String])?["error"]?.hasPrefix(
            "the type of this output field is not known from the spec: name;") == true)
        // The same columns as the stream --to arrow writes.
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("explain-\(UUID().uuidString).arrows")
        defer { try? FileManager.default.removeItem(at: out) }
        let mapped = try CLI.run(["-s", spec, "--to", "arrow", "-o", out.path], stdin: "")
        #expect(mapped.status == 0)
        let stream = try ArrowReading.read(Array(try Data(contentsOf: out)))
        #expect(stream.schema.fields.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
                == columns.map { "\($0["name"]!) \($0["type"]!)" }.joined(separator: ", "))
    }

    @Test func explainAsJSON() throws {
        let r = try CLI.run(["explain", CLI.example("events.spec.json"), "--json"])
        #expect(r.status == 0)
        let value = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(value["streamed"] as? Bool == true)
        let object = try #require(value["object"] as? [String: Any])
        let fields = try #require(object["fields"] as? [[String: Any]])
        #expect(fields.map { $0["destination"] as? String } == ["id", "kind", "actor.login", "actor.avatar", "repo", "createdAtMs", "commits", "public"])
        #expect(object["required"] as? [String] == ["id", "type", "actor.login", "repo.name", "created_at"])
        #expect(fields[1]["streamed"] as? Bool == false)
        #expect(fields[1]["materializedBecause"] as? String == "enum")
    }

    @Test func explainTheReverseAndWholeRecordMappers() throws {
        let r = try CLI.run(["explain", CLI.example("person.spec.json"), "--reverse"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("  1  first_name   firstName"))
        let mapper = try CLI.temporaryFile(#"{"mapper":{"keys":"camel","deep":true}}"#)
        let whole = try CLI.run(["explain", mapper])
        #expect(whole.stdout == """
            record: keys(foundation.camel, deep), streamed
            arrow columns (--to arrow): none: the mapping's result is not an object of named fields (its keys are not \
            known from the spec)

            """)
    }

    @Test func helpDocumentsEveryExitStatus() throws {
        let r = try CLI.run(["--help"])
        #expect(r.status == 0)
        for line in ["0    every record was mapped", "1    some records were rejected", "2    the spec is invalid", "3    input or output error",
                     "4    stopped at a rejected record", "64   command-line usage error", "130  interrupted", "141  standard output was closed"] {
            #expect(r.stdout.contains(line))
        }
        for flag in ["--spec", "--field", "--key-style", "--require", "--type", "--default", "--keep-unmapped", "--drop-unmapped", "--reverse",
                     "--output", "--framing", "--engine", "--rejects", "--redact", "--rejects-record-bytes", "--on-error", "--max-rejects",
                     "--progress", "--stats", "--warnings", "--quiet", "--print-spec"] {
            #expect(r.stdout.contains(flag), "help mentions \(flag)")
        }
        #expect(!r.stdout.contains("--progress-interval"))
        let sub = try CLI.run(["help"])
        #expect(sub.stdout.contains("check"))
        #expect(sub.stdout.contains("explain"))
    }

    /// The enum options' values are their raw strings in help and completions (`arrow-file`, not the case's name
    /// `arrowFile`), with no description of their own, and their defaults shown the same way (`RawStringArgument`).
    @Test func enumOptionsListTheirRawValues() throws {
        let help = try CLI.run(["--help"])
        #expect(help.status == 0)
        let text = help.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        for values in ["(values: ndjson, csv, tsv, arrow, arrow-file, arrow-stream)", "(values: gzip, zstd, xz, bzip2, none)",
                       "(values: auto, ndjson, array, concat, seq; default: auto)", "(values: stream, tree; default: stream)",
                       "(values: reject, fail; default: reject)", "(values: fail, warn)", "(values: drop, null)"] {
            #expect(text.contains(values), "help lists \(values)")
        }
        #expect(!text.contains("arrowFile") && !text.contains("arrowStream"))
        let script = try CLI.run(["--generate-completion-script", "bash"])
        #expect(script.stdout.contains("'arrow-file'$'\\n''arrow-stream'"))
        #expect(!script.stdout.contains("arrowFile"))
    }

    @Test func versionAndUsageErrors() throws {
        let v = try CLI.run(["--version"])
        #expect(v.status == 0)
        #expect(!v.stdout.isEmpty)
        let bad = try CLI.run(["--engine", "bogus"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("Usage: streammap [OPTIONS] [FILE...]\n"))
        let unknown = try CLI.run(["--frobnicate"])
        #expect(unknown.status == 64)
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts(_ shell: String) throws {
        let r = try CLI.run(["--generate-completion-script", shell])
        #expect(r.status == 0)
        #expect(r.stdout.contains("streammap"))
        #expect(r.stdout.contains("--key-style") || r.stdout.contains("key-style"))
        #expect(r.stdout.contains("explain"))
    }

    /// bash completes the values of `--key-style` (the spec's key style names), as it is called at a prompt.
    @Test func bashCompletesKeyStyles() throws {
        let script = try CLI.run(["--generate-completion-script", "bash"])
        let file = try CLI.temporaryFile(script.stdout, name: "streammap.bash")
        func complete(_ words: String...) throws -> [String] {
            let r = try CLI.execute(URL(fileURLWithPath: "/bin/bash"), ["-c", """
                source "$1"; shift
                COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                _streammap streammap "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\\n" "${COMPREPLY[@]}"
                """, "_", file] + words, stdinData: Data(), directory: nil)
            return r.stdoutLines.filter { !$0.isEmpty }
        }
        #expect(try complete("streammap", "map", "--key-style", "ca") == ["camel"])
        #expect(try complete("streammap", "map", "--key-style", "hydrant.") == ["hydrant.snake", "hydrant.camel", "hydrant.upperCamel"])
        #expect(try complete("streammap", "map", "--key-style", "").count == 10)
    }
}
