import Foundation
import Testing

/// The one-liner flags: they build (or amend) a spec, so simple jobs need no spec file.
@Suite("streammap one-liner flags")
struct FlagsCLITests {
    static let users = """
        {"id":1,"user":{"name":"Ada","screen_name":"ada"},"created_at":"2014-08-31T00:29:15Z","tags":null}
        {"id":2,"user":{"name":"Bo"},"extra":true}

        """

    @Test func fieldSelectsAndRenamesNestedPaths() throws {
        let r = try CLI.run(["--field", "id", "--field", "user.name=name", "--field", "user.screen_name=handle", "--field", "tags"],
                            stdin: Self.users)
        #expect(r.stdout == """
            {"id":1,"name":"Ada","handle":"ada","tags":null}
            {"id":2,"name":"Bo"}

            """)
        #expect(r.stderr == "")
        #expect(r.status == 0)
    }

    @Test func fieldWithoutADestinationKeepsItsPath() throws {
        let r = try CLI.run(["--field", "user.name", "--field", "id"], stdin: Self.users)
        #expect(r.stdout == "{\"user\":{\"name\":\"Ada\"},\"id\":1}\n{\"user\":{\"name\":\"Bo\"},\"id\":2}\n")
        #expect(r.status == 0)
    }

    @Test func keyStyleRenamesWhatTheFlagsDoNotSpellOut() throws {
        let r = try CLI.run(["--field", "created_at", "--field", "user.screen_name=handle_name", "--field", "user", "--key-style", "camel"],
                            stdin: #"{"created_at":"x","user":{"screen_name":"ada","list_items":[{"item_id":1}]}}"# + "\n")
        #expect(r.stdout == #"{"createdAt":"x","handle_name":"ada","user":{"screenName":"ada","listItems":[{"itemId":1}]}}"# + "\n")
        #expect(r.status == 0)
    }

    @Test func keyStyleAloneKeepsEveryKeyAndRenamesThemAll() throws {
        let r = try CLI.run(["--key-style", "snake"], stdin: #"{"userId":1,"theUser":{"screenName":"x","listItems":[{"itemId":1}]},"n":[1,2]}"# + "\n")
        #expect(r.stdout == #"{"user_id":1,"the_user":{"screen_name":"x","list_items":[{"item_id":1}]},"n":[1,2]}"# + "\n")
        #expect(r.status == 0)
    }

    @Test func requireRejectsAbsentAndNullAndPassesTheRestThrough() throws {
        let r = try CLI.run(["--require", "id"], stdin: "{\"id\":1,\"a\":2}\n{\"a\":3}\n{\"id\":null}\n")
        #expect(r.stdout == "{\"id\":1,\"a\":2}\n")
        #expect(r.stderrLines == [
            "streammap: <stdin>:2: /id: value is required, found absent",
            "streammap: <stdin>:3: /id: value is required, found null",
        ])
        #expect(r.status == 1)
    }

    @Test func requireOnANestedPath() throws {
        let r = try CLI.run(["--field", "id", "--require", "user.name"], stdin: Self.users + "{\"id\":3,\"user\":{}}\n")
        #expect(r.stdout == "{\"id\":1,\"user\":{\"name\":\"Ada\"}}\n{\"id\":2,\"user\":{\"name\":\"Bo\"}}\n")
        #expect(r.stderr == "streammap: <stdin>:3: /user/name: value is required, found absent\n")
        #expect(r.status == 1)
    }

    @Test func typeChecksTheTypeAndLetsAbsentPass() throws {
        let r = try CLI.run(["--type", "age=integer", "--type", "name=string"], stdin: "{\"age\":3}\n{\"age\":\"x\"}\n{}\n{\"age\":1.5,\"name\":7}\n")
        #expect(r.stdout == "{\"age\":3}\n{}\n")
        #expect(r.stderrLines == [
            "streammap: <stdin>:2: /age: expected integer, found string \"x\"",
            "streammap: <stdin>:4: /age: expected integer, found number 1.5",
            "streammap: <stdin>:4: /name: expected string, found integer 7",
        ])
        #expect(r.status == 1)
    }

    @Test func defaultFillsAbsentAndNull() throws {
        let r = try CLI.run(["--field", "id", "--default", #"lang="en""#, "--default", "score=0"],
                            stdin: "{\"id\":1}\n{\"id\":2,\"lang\":null,\"score\":5}\n{\"id\":3,\"lang\":\"ja\"}\n")
        #expect(r.stdout == """
            {"id":1,"lang":"en","score":0}
            {"id":2,"lang":"en","score":5}
            {"id":3,"lang":"ja","score":0}

            """)
        #expect(r.status == 0)
    }

    /// `--type`, `--require`, `--default` on their own keep every other key, nested ones too, in input order, in
    /// both engines (they deleted `u.name` and moved `u` first); with `--field` a flag is a field like any other.
    @Test(arguments: ["stream", "tree"])
    func checksAndDefaultsAloneChangeNoOtherKey(_ engine: String) throws {
        let record = #"{"id":1,"u":{"age":3,"name":"x"},"z":0}"# + "\n"
        let typed = try CLI.run(["--engine", engine, "--type", "u.age=integer"], stdin: record)
        #expect(typed.stdout == record)
        #expect(typed.stderr == "")
        let defaulted = try CLI.run(["--engine", engine, "--default", "u.x=1"], stdin: #"{"u":{"age":3,"name":"x"}}"# + "\n")
        #expect(defaulted.stdout == #"{"u":{"age":3,"name":"x","x":1}}"# + "\n")
        let input = #"{"b":{"c":null,"d":[1,{"e":"s"}]},"a":2}"# + "\n" + #"{"a":"x","b":5}"# + "\n" + #"{}"# + "\n"
        let all = try CLI.run(["--engine", engine, "--require", "a", "--type", "b.d.1.e=string", "--default", "b.c=0"], stdin: input)
        #expect(all.stdout == #"{"b":{"c":0,"d":[1,{"e":"s"}]},"a":2}"# + "\n")
        #expect(all.stderrLines == [
            "streammap: <stdin>:2: /b/c: cannot write to b.c: a value on the way is not an object",
            "streammap: <stdin>:3: /a: value is required, found absent",
        ])
        // A check that fails rejects the record; nothing else is touched.
        let failing = try CLI.run(["--engine", engine, "--type", "u.age=string"], stdin: record)
        #expect(failing.stderr == "streammap: <stdin>:1: /u/age: expected string, found integer 3\n")
        // With --field, the flags are fields: fields first, then the kept keys; a nested path consumes its key.
        let withField = try CLI.run(["--engine", engine, "--field", "id", "--type", "u.age=integer", "--keep-unmapped"], stdin: record)
        #expect(withField.stdout == #"{"id":1,"u":{"age":3},"z":0}"# + "\n")
        // With --key-style: checked in place on the input's paths, then the whole record renamed.
        let styled = try CLI.run(["--engine", engine, "--key-style", "camel", "--type", "u_x.the_age=integer", "--default", "u_x.new_key=1"],
                                 stdin: #"{"user_id":1,"u_x":{"the_age":3,"the_name":"x"},"z":0}"# + "\n")
        #expect(styled.stdout == #"{"userId":1,"uX":{"theAge":3,"theName":"x","newKey":1},"z":0}"# + "\n")
        let printed = try CLI.run(["--type", "u.age=integer", "--print-spec"])
        #expect(printed.stdout == #"{"fields":{"u.age":{"to":"u.age","missing":"omit","null":"null","type":"integer"}},"unmapped":"inPlace"}"# + "\n")
    }

    @Test func keepAndDropUnmapped() throws {
        let input = "{\"x\":1,\"id\":2,\"y\":{\"z\":3}}\n"
        let keep = try CLI.run(["--field", "id", "--keep-unmapped"], stdin: input)
        #expect(keep.stdout == "{\"id\":2,\"x\":1,\"y\":{\"z\":3}}\n")
        let drop = try CLI.run(["--require", "id", "--drop-unmapped"], stdin: input)
        #expect(drop.stdout == "{\"id\":2}\n")
        let spec = try CLI.temporaryFile(#"{"fields":{"id":"id"},"unmapped":"keep"}"#)
        let specDrop = try CLI.run(["--spec", spec, "--drop-unmapped"], stdin: input)
        #expect(specDrop.stdout == "{\"id\":2}\n")
    }

    @Test func flagsAmendTheSpecsFieldForTheSameSourceAndWin() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"id":"id","name":{"to":"name","via":"string"},"age":[{"optional":"integer"},"age"]}}"#)
        let printed = try CLI.run(["--spec", spec, "--field", "name=fullName", "--require", "age", "--field", "city", "--print-spec"])
        #expect(printed.stdout == #"""
            {"fields":{"id":"id","name":{"to":"fullName","via":"string"},"age":{"to":"age","via":[{"optional":"integer"},"required"],"required":true},"city":{"to":"city","missing":"omit","null":"null"}}}

            """#)
        #expect(printed.status == 0)
        let r = try CLI.run(["--spec", spec, "--field", "name=fullName", "--require", "age", "--field", "city"],
                            stdin: "{\"id\":1,\"name\":\"A\",\"age\":3,\"city\":\"Oslo\"}\n{\"id\":2,\"name\":\"B\"}\n")
        #expect(r.stdout == "{\"id\":1,\"fullName\":\"A\",\"age\":3,\"city\":\"Oslo\"}\n")
        #expect(r.stderr == "streammap: <stdin>:2: /age: value is required, found absent\n")
        #expect(r.status == 1)
    }

    @Test func listFormSpecsAreAmendedByFrom() throws {
        let spec = try CLI.temporaryFile(#"{"fields":[{"from":"a","to":"b"}]}"#)
        let r = try CLI.run(["--spec", spec, "--field", "a=c", "--type", "d=integer", "--print-spec"])
        #expect(r.stdout == #"{"fields":[{"from":"a","to":"c"},{"from":"d","to":"d","missing":"omit","null":"null","type":"integer"}]}"# + "\n")
    }

    @Test func printSpecShowsWhatTheFlagsBuild() throws {
        let r = try CLI.run(["--field", "user.login=user", "--key-style", "camel", "--field", "created_at", "--print-spec"])
        #expect(r.stdout == #"""
            {"fields":{"user.login":{"to":"user","via":{"keys":"foundation.camel","deep":true},"missing":"omit","null":"null"},"created_at":{"to":"createdAt","via":{"keys":"foundation.camel","deep":true},"missing":"omit","null":"null"}}}

            """#)
        #expect(r.status == 0)
    }

    @Test func reverseAppliesToTheFlags() throws {
        let r = try CLI.run(["--field", "user_name=userName", "--reverse"], stdin: "{\"userName\":\"x\"}\n")
        #expect(r.stdout == "{\"user_name\":\"x\"}\n")
        #expect(r.status == 0)
    }

    @Test func withoutSpecOrFlagsRecordsAreCopiedCompactly() throws {
        let r = try CLI.run([], stdin: "{ \"a\" : [1, 2.50, 1E+2] }\n\"text\"\n[ ]\n17\n")
        #expect(r.stdout == "{\"a\":[1,2.50,1E+2]}\n\"text\"\n[]\n17\n")
        #expect(r.status == 0)
    }

    @Test func badFlagValuesAreUsageErrors() throws {
        let notJSON = try CLI.run(["--default", "lang=en"])
        #expect(notJSON.status == 64)
        #expect(notJSON.stderr.contains(#"--default lang=en: en is not JSON (a string is written with quotes: --default 'lang="en"')"#))
        let style = try CLI.run(["--key-style", "kebab"])
        #expect(style.status == 64)
        #expect(style.stderr.contains("--key-style kebab: unknown key style"))
        let type = try CLI.run(["--type", "a=integr"])
        #expect(type.status == 64)
        #expect(type.stderr.contains(#"--type a=integr: unknown type "integr""#))
        let field = try CLI.run(["--field", "a="])
        #expect(field.status == 64)
        let both = try CLI.run(["--require", "a", "--default", "a=1"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("--require and --default both given for a"))
        let mapperSpec = try CLI.temporaryFile(#"{"mapper":"identity"}"#)
        let mapper = try CLI.run(["--spec", mapperSpec, "--field", "a"])
        #expect(mapper.status == 64)
        #expect(mapper.stderr.contains(#"the spec has a whole-record "mapper""#))
    }

    @Test func flagsThatAddUpToAnInvalidSpecAreAnInvalidSpec() throws {
        let r = try CLI.run(["--field", "a=x", "--field", "b=x.y"])
        #expect(r.stderr == "streammap: <flags>: /fields: destination \"x.y\" overlaps destination \"x\"\n")
        #expect(r.status == 2)
        let spec = try CLI.temporaryFile(#"{"fields":{"a":"x"}}"#)
        let amended = try CLI.run(["--spec", spec, "--field", "b=x.y"])
        #expect(amended.stderr == "streammap: \(spec) with flags: /fields: destination \"x.y\" overlaps destination \"x\"\n")
        #expect(amended.status == 2)
    }

    @Test func bothEnginesAgreeOnFlagBuiltSpecs() throws {
        let args = ["--field", "id", "--field", "user=u", "--key-style", "camel", "--require", "created_at", "--type", "id=integer"]
        let input = Self.users + "{\"id\":\"x\",\"created_at\":1}\n{\"broken\n"
        let stream = try CLI.run(args, stdin: input)
        let tree = try CLI.run(args + ["--engine", "tree"], stdin: input)
        #expect(stream.stdout == tree.stdout)
        #expect(stream.stderr == tree.stderr)
        #expect(stream.status == tree.status)
        #expect(stream.status == 1)
    }
}
