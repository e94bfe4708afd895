// The floor under any mapper that validates every byte: simdjson's DOM parser (Debian libsimdjson-dev) reading
// an NDJSON file and parsing every line in full — UTF-8, the grammar of every value, numbers, strings and their
// escapes — with nothing mapped and nothing written. Benchmarks/arrow_output.py times it beside the NDJSON →
// Arrow peers: no tool that checks every byte as StreamMap does is likely to map the same input faster than this
// on one core. Built with -march=native (simdjson's kernel for this CPU); one thread (parse_many's stage-1 thread
// is counted: the time is the process's CPU time as well as its wall time).
//   c++ -O3 -march=native -std=c++17 validate_simdjson.cpp -lsimdjson -o validate-simdjson && ./validate-simdjson C.ndjson
// Prints {"seconds": wall, "cpu_seconds": user + system, "documents": N, "errors": N, "implementation": "..."}.
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <ctime>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: validate-simdjson FILE.ndjson\n");
        return 2;
    }
    simdjson::padded_string json;
    if (auto error = simdjson::padded_string::load(argv[1]).get(json)) {
        std::fprintf(stderr, "validate-simdjson: %s: %s\n", argv[1], simdjson::error_message(error));
        return 1;
    }
    // (The file is read into memory first, untimed: its pages' first touch would cost more than the parse.)
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpu = std::clock();
    simdjson::dom::parser parser;
    simdjson::dom::document_stream documents;
    if (auto error = parser.parse_many(json, 4 << 20).get(documents)) {
        std::fprintf(stderr, "validate-simdjson: %s\n", simdjson::error_message(error));
        return 1;
    }
    size_t count = 0, errors = 0;
    for (auto document : documents) {
        if (document.error()) errors++; else count++;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double cpuSeconds = double(std::clock() - cpu) / CLOCKS_PER_SEC;
    std::printf("{\"seconds\": %.6f, \"cpu_seconds\": %.6f, \"documents\": %zu, \"errors\": %zu, \"implementation\": \"%s\"}\n",
                seconds, cpuSeconds, count, errors, simdjson::get_active_implementation()->name().c_str());
    return errors == 0 ? 0 : 1;
}
