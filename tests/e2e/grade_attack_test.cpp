// One `runner grade` run over the attack corpus (tests/fixtures/attacks: plugins that attack the grader
// itself) plus two honest submissions, with tests/data/grading/attack-rubric.json: every attacker gets
// the status and score it must get, the honest ones are graded exactly as in a run without the
// attackers, the run exits normally, and nothing the attackers tried to leave behind exists afterwards
// (marker files, planted results and submissions, caches outside the scratch folder, kreg-leftover
// processes, connections to the test's listeners, a killed bystander). The same grading again as an
// unprivileged user (uid 65534 through setpriv).
//
// Safety: the signal attackers aim at their session, and the grader runs under `setsid` here, so that
// without the defences they end this grading run and nothing else (tests/fixtures/attacks/
// attacks_common.hpp). The tests share fixed paths (/tmp/kreg-escape-*, the listener socket) and run
// serially (tests/e2e/CMakeLists.txt).
#include "as_nobody.hpp"
#include "grade/gradebook.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <thread>

namespace kreg {
namespace {
namespace fs = std::filesystem;

const std::string kRunner = KREG_RUNNER;
const fs::path kFixtures = KREG_FIXTURE_DIR;
const std::string kRubric = std::string(KREG_TEST_DATA_DIR) + "/grading/attack-rubric.json";
const std::string kSecret = "0x5eedc0ffee";  // KREG_SECRET_SEED for every grading run here

// The attack rubric's points: "odd shapes" 60 (all or nothing), "a mid-size shape" 20, and two tiers at
// 64^3 of 10 each, "within 50x of the naive loop" (any honest loop, whatever the load) and "20x faster
// than the naive loop" (only a cache or a forged timing).
constexpr double kCorrectness = 80, kNaiveSpeed = 90;

struct Expected {
    std::string file;    // in the fixture folder; '@': the runner's plugin folder
    std::string status;  // "!a,b": anything but these; "@memory": kMemoryCapStatus
    double score;        // -1: not checked here (the honest ones are compared with the baseline)
};

// student -> what it must get. The honest students sort first: the planting attackers go for them.
const std::map<std::string, Expected> kCorpus = {
    {"alice", {"fixture_good.so", "graded", -1}},
    {"bob", {"@cpu_blocked.so", "graded", -1}},
    // 1. Signals to the grader, by every facility; each computes correctly.
    {"sig_kill", {"attack_signal_kill.so", "graded", kNaiveSpeed}},
    {"sig_fsetown", {"attack_signal_fsetown.so", "graded", kNaiveSpeed}},
    {"sig_ioctl", {"attack_signal_ioctl.so", "graded", kNaiveSpeed}},
    {"sig_sweep", {"attack_signal_sweep.so", "graded", kNaiveSpeed}},
    // 2. Forged replies, a stolen request channel, stray lines (2 of 5 correctness runs lost: 20 points).
    {"forge_load", {"attack_forge_at_load.so", "protocol_violation", 0}},
    {"forge_create", {"attack_forge_at_create.so", "protocol_violation", 0}},
    {"thief", {"attack_steal_request.so", "protocol_violation", 0}},
    {"stray_newline", {"attack_stray_newline.so", "protocol_violation", 20}},
    {"stray_hello", {"attack_stray_hello.so", "protocol_violation", 20}},
    // 3. Caches in files, each plugin graded twice (the second copy colludes with the first): no tier.
    {"cache_tmp_1", {"attack_cache_tmp.so", "graded", kCorrectness}},
    {"cache_tmp_2", {"attack_cache_tmp.so", "graded", kCorrectness}},
    {"cache_home_1", {"attack_cache_home.so", "graded", kCorrectness}},
    {"cache_home_2", {"attack_cache_home.so", "graded", kCorrectness}},
    {"cache_scratch_1", {"attack_cache_scratch.so", "graded", kCorrectness}},
    {"cache_scratch_2", {"attack_cache_scratch.so", "graded", kCorrectness}},
    {"cache_shm_1", {"attack_cache_shm.so", "graded", kCorrectness}},
    {"cache_shm_2", {"attack_cache_shm.so", "graded", kCorrectness}},
    {"predictor", {"attack_predict_inputs.so", "graded", kNaiveSpeed}},
    // 4. Planting files (the source-folder variant, plant_src, is added by make_submissions).
    {"plant_so", {"attack_plant_output.so", "graded", kNaiveSpeed}},
    // 5. and 6. Secrets and the network: a leak turns into a wrong result.
    {"secrets", {"attack_read_secrets.so", "graded", kNaiveSpeed}},
    {"network", {"attack_network.so", "graded", kNaiveSpeed}},
    // 7. Memory over the rubric's limit, asked for with new[] and malloc: memory_limit, by memory.events where a
    // cgroup holds the worker, by the worker's allocator under RLIMIT_DATA alone (more ways: kWaysAndForgeries).
    {"memory_hog", {"attack_memory_hog.so", "memory_limit", 0}},
    {"memory_malloc", {"attack_memory_malloc.so", "memory_limit", 0}},
    // mmap is refused by the static audit before any cap could be reached (a way of asking closed earlier).
    {"memory_mmap", {"attack_memory_mmap.so", "rejected_audit", 0}},
    // 8. Writes outside C.
    {"oob_far_past", {"attack_write_far_past_c.so", "crashed", 0}},
    {"oob_before", {"attack_write_before_c.so", "failed", 0}},
    {"oob_far_before", {"attack_write_far_before_c.so", "!graded,timeout", 0}},
    // 9. Leftover processes.
    {"leftover_fork", {"attack_leftover_fork.so", "graded", kNaiveSpeed}},
    {"leftover_holds_reply", {"attack_leftover_holds_reply.so", "crashed", 0}},
    {"leftover_stops", {"attack_leftover_stops_worker.so", "!graded,timeout", 0}},
    // 10. Timer tampering: the worker's clock reads 1/50 of each call; the grader's own bound decides the tier.
    {"timer_tamper", {"attack_timer_tamper.so", "graded", kNaiveSpeed}},
    // 11. A failure message made of kreg's own phrases: what the grader saw is a kernel's failure.
    {"kreg_phrases", {"attack_kreg_phrases.so", "failed", 0}},
};
const std::string kSourceStudent = "plant_src";

// Graded on their own (ForgedEndCausesAndEveryWayOfAskingForMemory): a worker's result rewritten from inside
// to claim an end only the runner observes, every way of asking for memory past the cap that the audit lets
// in (mmap and syscall() are refused by it: memory_mmap above), and the harness-state fixtures.
const std::map<std::string, Expected> kWaysAndForgeries = {
    {"forge_memory_cap", {"attack_forge_memory_cap.so", "protocol_violation", 0}},
    {"forge_call_timeout", {"attack_forge_call_timeout.so", "protocol_violation", 0}},
    {"forge_signal", {"attack_forge_signal.so", "protocol_violation", 0}},
    {"forge_sandbox_refusal", {"attack_forge_sandbox_refusal.so", "protocol_violation", 0}},
    {"memory_calloc", {"attack_memory_calloc.so", "memory_limit", 0}},
    {"memory_realloc", {"attack_memory_realloc.so", "memory_limit", 0}},
    {"memory_posix_memalign", {"attack_memory_posix_memalign.so", "memory_limit", 0}},
    {"memory_aligned_alloc", {"attack_memory_aligned_alloc.so", "memory_limit", 0}},
    {"memory_vector", {"attack_memory_vector.so", "memory_limit", 0}},
    {"memory_sbrk", {"attack_memory_sbrk.so", "memory_limit", 0}},
    // A raw mmap system call passes no allocator: only a cgroup sees its cap reached; under RLIMIT_DATA alone
    // its refusal is the kernel's failure (the gap docs/GRADING.md names).
    {"memory_raw_mmap", {"attack_memory_raw_mmap.so", "@memory", 0}},
    // The stack is bounded by RLIMIT_STACK before any memory cap: the worker's SIGSEGV.
    {"memory_stack", {"attack_memory_stack.so", "!graded,ok,memory_limit", 0}},
    // The harness-state fixtures (tests/fixtures/harness_state; grade_test grades them as this user): graded
    // here again so that they are graded as an unprivileged user too. Scores: not checked (-1), the status is
    // the failure.
    {"state_nan_as_zero", {"state_nan_as_zero.so", "wrong_result", -1}},
    {"state_poison_word", {"state_poison_word_as_zero.so", "wrong_result", -1}},
    {"state_large_or_nan", {"state_large_or_nan_as_zero.so", "wrong_result", -1}},
    {"state_far_1mib", {"state_write_1mib_past_c.so", "crashed", -1}},
    {"state_far_60mib", {"state_write_60mib_past_c.so", "crashed", -1}},
    {"state_clobbers_b", {"state_clobbers_b.so", "failed", -1}},
};

// Every file an attacker tries to leave outside its scratch folder; none may exist after grading.
std::vector<fs::path> marker_paths() {
    std::vector<fs::path> paths;
    for (const char* dir : {"/tmp", "/var/tmp", "/root", "/dev/shm"})
        for (const char* name : {"kreg-escape-plant", "kreg-escape-cmake-configure", "kreg-escape-cmake-exec",
                                 "kreg-escape-cmake-build", "kreg-attack-cache"})
            paths.push_back(fs::path(dir) / name);
    if (const char* home = std::getenv("HOME"))
        for (const char* name : {"kreg-escape-plant-home", "kreg-escape-cmake-home", "kreg-attack-cache"})
            paths.push_back(fs::path(home) / name);
    return paths;
}

void remove_markers() {
    std::error_code ec;
    for (const fs::path& p : marker_paths()) fs::remove_all(p, ec);
}

bool running(pid_t pid);

// Running (not zombie) pids whose /proc/<pid>/comm is name.
std::vector<pid_t> processes_named(const std::string& name) {
    std::vector<pid_t> pids;
    if (DIR* dir = ::opendir("/proc")) {
        while (const dirent* e = ::readdir(dir)) {
            char* end = nullptr;
            const long pid = std::strtol(e->d_name, &end, 10);
            if (end == e->d_name || *end != '\0') continue;
            std::string comm = test::slurp(fs::path("/proc") / e->d_name / "comm");
            while (!comm.empty() && comm.back() == '\n') comm.pop_back();
            if (comm == name && running(pid_t(pid))) pids.push_back(pid_t(pid));
        }
        ::closedir(dir);
    }
    return pids;
}

// True when pid exists and is not a zombie (a killed child of a dead runner may wait to be reaped).
bool running(pid_t pid) {
    if (pid <= 0) return false;
    const std::string stat = test::slurp(fs::path("/proc") / std::to_string(pid) / "stat");
    const size_t close_paren = stat.rfind(')');
    return close_paren != std::string::npos && close_paren + 2 < stat.size() && stat[close_paren + 2] != 'Z' &&
           stat[close_paren + 2] != 'X';
}

// A Unix socket this test listens on, counting every connection until it is destroyed. path starting
// with '\0' is an abstract socket.
class Listener {
public:
    explicit Listener(const std::string& path) : path_(path) {
        if (path_[0] != '\0') ::unlink(path_.c_str());
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path_.data(), path_.size());
        const socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + path_.size() + (path_[0] == '\0' ? 0 : 1));
        ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd_, 16) == 0;
        if (ok_ && path_[0] != '\0') ::chmod(path_.c_str(), 0777);  // the unprivileged run must be able to try
        if (ok_) thread_ = std::thread([this] { accept_loop(); });
    }
    ~Listener() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        if (fd_ >= 0) ::close(fd_);
        if (path_[0] != '\0') ::unlink(path_.c_str());
    }
    bool ok() const { return ok_; }
    int connections() const { return connections_; }

private:
    void accept_loop() {
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 100) > 0) {
                const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
                if (client >= 0) {
                    ++connections_;
                    ::close(client);
                }
            }
        }
    }
    std::string path_;
    int fd_ = -1;
    bool ok_ = false;
    std::atomic<bool> stop_{false};
    std::atomic<int> connections_{0};
    std::thread thread_;
};

fs::path fixture_file(const std::string& file) {
    return file[0] == '@' ? fs::path(KREG_PLUGIN_DIR) / file.substr(1) : kFixtures / file;
}

void make_submissions(const fs::path& subs) {
    fs::create_directories(subs);
    for (const auto& [student, e] : kCorpus) fs::copy_file(fixture_file(e.file), subs / (student + ".so"));
    const fs::path src = subs / kSourceStudent;
    fs::create_directories(src);
    fs::copy_file(fs::path(KREG_SOURCE_DIR) / "plugins" / "template" / "my_gemm.cpp", src / "my_gemm.cpp");
    const fs::path attack = fs::path(KREG_SOURCE_DIR) / "tests" / "fixtures" / "attacks" / "plant_source";
    fs::copy_file(attack / "CMakeLists.txt", src / "CMakeLists.txt");
    fs::copy_file(attack / "write_one.cmake", src / "write_one.cmake");
}

std::map<std::string, StudentResult> results(const fs::path& out) {
    std::map<std::string, StudentResult> by_student;
    for (const auto& r : Gradebook(out).all()) by_student[r.student] = r;
    return by_student;
}

double correctness_points(const StudentResult& r) {
    double points = 0;
    for (const auto& c : r.checks)
        if (c.kind == "correctness") points += c.points;
    return points;
}

// "@memory" (a raw mmap, which no allocator sees): memory_limit where the worker's cgroup held it (memory.events
// counts the cap reached), failed where only RLIMIT_DATA did (no delegated cgroup): the kernel's refusal
// leaves nothing outside the plugin to observe, and the plugin's word is not read.
std::string memory_cap_status(const StudentResult& r) {
    if (!r.sandbox.is_object()) return "failed";  // no confinement report: no cgroup was seen to hold it
    for (const auto& applied : r.sandbox.value("applied", nlohmann::json::array()))
        if (applied.is_string() && applied.get<std::string>().rfind("memory cgroup: ", 0) == 0) return "memory_limit";
    return "failed";
}

void expect_status(const std::string& student, const StudentResult& r, const std::string& expected) {
    if (expected == "@memory") {
        EXPECT_EQ(r.status, memory_cap_status(r)) << student << ": " << r.summary << "\n" << r.sandbox.dump();
        return;
    }
    if (expected[0] != '!') {
        EXPECT_EQ(r.status, expected) << student << ": " << r.summary;
        return;
    }
    std::string rest = expected.substr(1);
    for (size_t at = 0; at <= rest.size();) {
        const size_t comma = rest.find(',', at);
        const std::string forbidden = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        EXPECT_NE(r.status, forbidden) << student << ": " << r.summary;
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    EXPECT_FALSE(r.status.empty()) << student;
}

// How the grading command is run: as this process's user, or as nobody through setpriv (as_nobody.hpp).
using Identity = test::RunAs;

std::optional<std::string> why_cannot_run_attacks() {
    if (std::system("command -v setsid >/dev/null 2>&1") != 0)
        return "setsid (util-linux) is missing: without it the signal attackers could reach this test's own process "
               "group";
    return std::nullopt;
}

// Grades subs into out as `who`, in a session of its own with a bystander process; returns the run.
test::CommandResult grade(const fs::path& dir, const std::string& subs, const std::string& out, const Identity& who) {
    const std::string inner = "./kreg-bystander 600 & echo $! > bystander-" + out + ".pid; exec " + kRunner +
                              " grade --rubric " + kRubric + " --submissions " + subs + " --out " + out;
    return test::run_command("KREG_SECRET_SEED=" + kSecret + " " + who.prefix() + "setsid -w sh -c '" + inner + "'",
                             dir, dir);
}

void grade_attack_corpus(const std::string& name, const Identity& who) {
    remove_markers();
    for (pid_t pid : processes_named("kreg-leftover")) ::kill(pid, SIGKILL);  // an earlier run's
    const auto dir = test::fresh_dir(name);
    make_submissions(dir / "subs");
    fs::create_directories(dir / "baseline");
    fs::copy_file(fixture_file(kCorpus.at("alice").file), dir / "baseline" / "alice.so");
    fs::copy_file(fixture_file(kCorpus.at("bob").file), dir / "baseline" / "bob.so");
    fs::copy_file("/bin/sleep", dir / "kreg-bystander");
    if (who.nobody) test::give_to_nobody(dir);

    // The honest students alone, with the same rubric and secret: what they must get with the attackers.
    const auto baseline_run = grade(dir, "baseline", "out-baseline", who);
    ASSERT_EQ(baseline_run.exit_code, 0) << baseline_run.err;
    auto baseline = results(dir / "out-baseline");

    std::optional<Listener> pathname, abstract;
    pathname.emplace("/tmp/kreg-attack-listener.sock");
    abstract.emplace(std::string("\0kreg-attack-abstract", 21));
    ASSERT_TRUE(pathname->ok() && abstract->ok()) << "cannot listen: " << std::strerror(errno);

    const auto run = grade(dir, "subs", "out", who);
    const std::vector<pid_t> leftovers = processes_named("kreg-leftover");
    const std::string bystander_pid = test::slurp(dir / "bystander-out.pid");
    const pid_t bystander = pid_t(std::atoi(bystander_pid.c_str()));
    const bool bystander_alive = running(bystander);
    if (bystander_alive) ::kill(bystander, SIGKILL);
    if (const int pid = std::atoi(test::slurp(dir / "bystander-out-baseline.pid").c_str()); pid > 0)
        ::kill(pid, SIGKILL);
    const int pathname_connections = pathname->connections(), abstract_connections = abstract->connections();
    pathname.reset();
    abstract.reset();
    std::vector<std::string> markers;
    for (const fs::path& p : marker_paths()) {
        std::error_code ec;
        const fs::file_status st = fs::symlink_status(p, ec);
        // A folder this user cannot search (/root, for an ordinary user running the test) is one a submission, run
        // as this user or as the grader's more restricted sandbox uid, cannot write into either.
        if (ec && ec != std::errc::permission_denied && ec != std::errc::no_such_file_or_directory)
            ADD_FAILURE() << "cannot check for " << p << ": " << ec.message();
        if (!ec && fs::exists(st)) markers.push_back(p.string());
    }
    // Clean up what a run without the defences leaves, before asserting anything.
    for (pid_t pid : leftovers) ::kill(pid, SIGKILL);
    remove_markers();

    // The run itself: it ends normally, and nobody outside it was touched.
    EXPECT_EQ(run.exit_code, 0) << "the grading run did not finish normally\n" << run.err;
    EXPECT_TRUE(bystander_alive) << "the bystander in the grader's session was killed (pid '" << bystander_pid << "')";
    EXPECT_TRUE(leftovers.empty()) << leftovers.size() << " kreg-leftover processes outlived grading";
    EXPECT_EQ(pathname_connections, 0) << "connections to /tmp/kreg-attack-listener.sock";
    EXPECT_EQ(abstract_connections, 0) << "connections to @kreg-attack-abstract";
    for (const std::string& m : markers) ADD_FAILURE() << "an attacker left " << m;
    EXPECT_FALSE(fs::exists(dir / "subs" / "zed.so")) << "a submission was planted in the submissions folder";
    EXPECT_FALSE(fs::exists(dir / "out" / "students" / "mallory.json")) << "a result was planted in the output folder";
    EXPECT_FALSE(fs::exists(dir / "out" / "gradebook-planted.csv")) << "a file was planted in the output folder";
    // The scratch-folder cache falls back to the working folder, the grader's, where $TMPDIR is not set.
    EXPECT_FALSE(fs::exists(dir / "kreg-attack-cache")) << "a cache was written into the grader's working folder";

    // Exactly the students submitted, each with its status and score.
    auto graded = results(dir / "out");
    std::set<std::string> expected_students{kSourceStudent}, students;
    for (const auto& [student, e] : kCorpus) expected_students.insert(student);
    for (const auto& [student, r] : graded) students.insert(student);
    EXPECT_EQ(students, expected_students) << run.err;
    for (const auto& [student, e] : kCorpus) {
        if (!graded.count(student)) {
            ADD_FAILURE() << student << ": not in the gradebook";
            continue;
        }
        const StudentResult& r = graded[student];
        expect_status(student, r, e.status);
        if (e.score >= 0) EXPECT_EQ(r.score, e.score) << student << ": " << r.summary;
        EXPECT_EQ(r.max_score, 100) << student;
    }
    // The honest students: as without the attackers.
    for (const char* honest : {"alice", "bob"}) {
        if (!graded.count(honest) || !baseline.count(honest)) {
            ADD_FAILURE() << honest << ": missing from the gradebook or the baseline";
            continue;
        }
        EXPECT_EQ(graded[honest].status, baseline[honest].status) << honest << ": " << graded[honest].summary;
        EXPECT_EQ(correctness_points(graded[honest]), correctness_points(baseline[honest]))
            << honest << ": " << graded[honest].summary;
        EXPECT_EQ(correctness_points(baseline[honest]), kCorrectness) << honest << ": " << baseline[honest].summary;
    }
    if (graded.count(kSourceStudent)) {
        const StudentResult& src = graded[kSourceStudent];
        EXPECT_EQ(src.status, "graded") << src.summary;
        EXPECT_EQ(correctness_points(src), kCorrectness) << src.summary;
    } else {
        ADD_FAILURE() << kSourceStudent << ": not in the gradebook";
    }
    // The evidence says what happened, where a status alone could hide it.
    if (graded.count("leftover_stops")) {  // "stopped", "SIGSTOP", ...: a frozen worker, not a slow one
        std::string summary = graded["leftover_stops"].summary;
        for (char& c : summary) c = char(std::tolower(static_cast<unsigned char>(c)));
        EXPECT_NE(summary.find("stop"), std::string::npos) << graded["leftover_stops"].summary;
    }
    const std::string csv = test::slurp(dir / "out" / "gradebook.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), long(expected_students.size() + 1)) << csv;
}

// Grades kWaysAndForgeries as `who`: every student its status and score, and the run ends normally.
void grade_ways_and_forgeries(const std::string& name, const Identity& who) {
    const auto dir = test::fresh_dir(name);
    fs::create_directories(dir / "subs");
    for (const auto& [student, e] : kWaysAndForgeries)
        fs::copy_file(fixture_file(e.file), dir / "subs" / (student + ".so"));
    fs::copy_file("/bin/sleep", dir / "kreg-bystander");
    if (who.nobody) test::give_to_nobody(dir);
    const auto run = grade(dir, "subs", "out", who);
    if (const int pid = std::atoi(test::slurp(dir / "bystander-out.pid").c_str()); pid > 0) ::kill(pid, SIGKILL);
    EXPECT_EQ(run.exit_code, 0) << "the grading run did not finish normally\n" << run.err;
    auto graded = results(dir / "out");
    for (const auto& [student, e] : kWaysAndForgeries) {
        if (!graded.count(student)) {
            ADD_FAILURE() << student << ": not in the gradebook\n" << run.err;
            continue;
        }
        const StudentResult& r = graded[student];
        expect_status(student, r, e.status);
        if (e.score >= 0) {
            EXPECT_EQ(r.score, e.score) << student << ": " << r.summary;
        }
    }
}

TEST(GradeAttack, ForgedEndCausesAndEveryWayOfAskingForMemory) {
    if (auto why = why_cannot_run_attacks()) GTEST_SKIP() << *why;
    grade_ways_and_forgeries("grade-ways", Identity{});
}

TEST(GradeAttack, ForgedEndCausesAndEveryWayOfAskingForMemoryAsAnUnprivilegedUser) {
    if (auto why = why_cannot_run_attacks()) GTEST_SKIP() << *why;
    if (auto why = test::why_cannot_run_as_nobody(kRunner)) GTEST_SKIP() << *why;
    grade_ways_and_forgeries("grade-ways-nobody", Identity{true});
}

TEST(GradeAttack, AttackCorpusAndHonestSubmissionsInOneRun) {
    if (auto why = why_cannot_run_attacks()) GTEST_SKIP() << *why;
    grade_attack_corpus("grade-attack", Identity{false});
}

TEST(GradeAttack, AttackCorpusAsAnUnprivilegedUser) {
    if (auto why = why_cannot_run_attacks()) GTEST_SKIP() << *why;
    if (auto why = test::why_cannot_run_as_nobody(kRunner)) GTEST_SKIP() << *why;
    grade_attack_corpus("grade-attack-nobody", Identity{true});
}

}  // namespace
}  // namespace kreg
