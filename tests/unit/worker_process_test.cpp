// The parent's side of the worker protocol and of confinement, against small shell scripts that play a
// worker (or a plugin misbehaving inside one): every line out of protocol is a violation that kills the
// worker, death is seen even when a child holds the reply channel, a stopped worker counts as dead, and
// a confined worker is pid 2 of its own namespace, sees no other process, gets no secret from the
// environment, and takes everything it started along when it ends.
#include "sandbox/confined_spawn.hpp"
#include "worker/process.hpp"

#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace kreg {
namespace {

// A worker that is /bin/sh running script; the script sees the nonce as $2 and writes replies to fd 4.
WorkerProcess start_script(const std::string& script, const WorkerConfinement* confinement = nullptr) {
    return WorkerProcess::start("/bin/sh", {"-c", script, "sh"}, confinement);
}

const std::string kHello = R"(printf '{"op":"hello","id":"%s:0"}\n' "$2" >&4; )";

// Whether any process on this machine has exactly this command line (arguments joined by spaces).
bool process_with_command_line(const std::string& wanted) {
    DIR* proc = ::opendir("/proc");
    if (!proc) return false;
    bool found = false;
    while (dirent* entry = ::readdir(proc)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        std::ifstream in(std::string("/proc/") + entry->d_name + "/cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (char& c : cmdline)
            if (c == '\0') c = ' ';
        while (!cmdline.empty() && cmdline.back() == ' ') cmdline.pop_back();
        found = found || cmdline == wanted;
    }
    ::closedir(proc);
    return found;
}

TEST(WorkerProtocol, AHelloWithItsIdIsAReplyAndTheIdIsNotPassedOn) {
    WorkerProcess w = start_script(kHello + "read x <&3");
    const auto hello = w.exchange(nullptr, 10);
    ASSERT_EQ(hello.outcome, WorkerProcess::Outcome::reply) << hello.violation;
    EXPECT_EQ(hello.message.value("op", ""), "hello");
    EXPECT_FALSE(hello.message.contains("id"));
    EXPECT_EQ(w.nonce().size(), 16u);
}

TEST(WorkerProtocol, EveryKindOfLineOutOfProtocolIsAViolationThatKillsTheWorker) {
    const std::pair<const char*, std::string> cases[] = {
        {"another id", R"(printf '{"op":"hello","id":"0000000000000000:0"}\n' >&4; sleep 30)"},
        {"no id", R"(printf '{"op":"hello"}\n' >&4; sleep 30)"},
        {"not JSON", R"(printf 'hello\n' >&4; sleep 30)"},
        {"not UTF-8", R"(printf '{"op":"hello","id":"%s:0","x":"\377"}\n' "$2" >&4; sleep 30)"},
        {"not an object", R"(printf '[1,2]\n' >&4; sleep 30)"},
        {"an empty line", R"(printf '\n' >&4; sleep 30)"},
        {"more after the reply", R"(printf '{"op":"hello","id":"%s:0"}\nmore\n' "$2" >&4; sleep 30)"},
        {"an overlong line", R"(head -c 2100000 /dev/zero | tr '\0' a >&4; sleep 30)"},
    };
    for (const auto& [what, script] : cases) {
        WorkerProcess w = start_script(script);
        const auto reply = w.exchange(nullptr, 20);
        EXPECT_EQ(reply.outcome, WorkerProcess::Outcome::violation) << what;
        EXPECT_FALSE(reply.violation.empty()) << what;
        EXPECT_FALSE(w.running()) << what << ": the worker must be killed on the spot";
    }
}

TEST(WorkerProtocol, AStrayLineBetweenRequestsIsAViolationOfTheNextExchange) {
    // The plugin's thread writes one line after the worker's reply; the next request must not take it
    // for its own reply (the rows would shift).
    WorkerProcess w = start_script(kHello + R"(sleep 0.3; printf '{"op":"result","id":"%s:1"}\n' "$2" >&4; sleep 30)");
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    ::usleep(800 * 1000);
    const auto next = w.exchange({{"op", "run"}}, 10);
    EXPECT_EQ(next.outcome, WorkerProcess::Outcome::violation);
    EXPECT_NE(next.violation.find("outside any request"), std::string::npos) << next.violation;
}

TEST(WorkerProtocol, ARepliedIdMustBeTheRequestInFlight) {
    // A forged reply for a request that was never sent, ahead of the worker's own.
    WorkerProcess w = start_script(kHello + R"(read x <&3; printf '{"op":"result","id":"%s:7"}\n' "$2" >&4; sleep 30)");
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    const auto reply = w.exchange({{"op", "run"}}, 10);
    EXPECT_EQ(reply.outcome, WorkerProcess::Outcome::violation);
    EXPECT_NE(reply.violation.find("another request"), std::string::npos) << reply.violation;
}

TEST(WorkerProtocol, APileOfDescriptorsIsAViolationNotAFullDescriptorTable) {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3 to pass descriptors";
    // After the hello, every byte it writes carries a descriptor, and no line ever ends.
    const std::string script = R"py(
import os, socket, sys, time
s = socket.socket(fileno=4)
s.sendall(('{"op":"hello","id":"%s:0"}\n' % sys.argv[2]).encode())
os.read(3, 4096)
null = os.open('/dev/null', os.O_RDONLY)
for _ in range(64):
    socket.send_fds(s, [b'x'], [null])
time.sleep(30)
)py";
    WorkerProcess w = WorkerProcess::start("/usr/bin/python3", {"-c", script});
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation << w.stderr_tail();
    }
    const auto reply = w.exchange({{"op", "run"}}, 20);
    ASSERT_EQ(reply.outcome, WorkerProcess::Outcome::violation) << w.stderr_tail();
    EXPECT_NE(reply.violation.find("descriptors"), std::string::npos) << reply.violation;
}

TEST(WorkerProtocol, AMessageMayCarryOnlyItsKnownFields) {
    EXPECT_EQ(unexpected_field({{"op", "output"}, {"id", "n:1"}}, {"op", "id"}), "");
    const std::string why = unexpected_field({{"op", "output"}, {"id", "n:1"}, {"score", 100}}, {"op", "id"});
    EXPECT_NE(why.find("unknown field 'score'"), std::string::npos) << why;
    EXPECT_NE(why.find("'output'"), std::string::npos) << why;
}

TEST(WorkerProtocol, DeathIsSeenEvenWhenAChildHoldsTheReplyChannel) {
    // The child keeps fd 4 open: EOF never comes. Without watching the process itself this would be a
    // timeout after the whole 60 s.
    WorkerProcess w = start_script(kHello + "read x <&3; (sleep 120 &); exit 3");
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    const auto reply = w.exchange({{"op", "run"}}, 60);
    ASSERT_EQ(reply.outcome, WorkerProcess::Outcome::ended);
    EXPECT_EQ(reply.exit.exit_code, 3);
}

TEST(WorkerProtocol, AWorkerThatEndedAfterItsReplyIsNotAliveForTheNextJob) {
    WorkerProcess w = start_script(kHello + "exit 5");
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    for (int i = 0; i < 100 && w.alive(); ++i) ::usleep(20 * 1000);
    EXPECT_FALSE(w.alive());
}

TEST(WorkerProtocol, AStoppedWorkerCountsAsDead) {
    WorkerProcess w = start_script(kHello + "read x <&3; kill -STOP $$; sleep 30");
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    const auto reply = w.exchange({{"op", "run"}}, 60);
    ASSERT_EQ(reply.outcome, WorkerProcess::Outcome::ended);
    EXPECT_EQ(reply.exit.stopped, "SIGSTOP");
    EXPECT_NE(reply.exit.describe().find("stopped by SIGSTOP"), std::string::npos);
    EXPECT_FALSE(w.running());
}

class Confined : public ::testing::Test {
protected:
    void SetUp() override {
        scratch_ = make_scratch_dir();
        ::setenv("KREG_SECRET_SEED", "1234567", 1);
        confinement_.scratch_dir = scratch_;
        confinement_.environment = confined_environment(scratch_, worker_environment_names());
    }
    void TearDown() override {
        ::unsetenv("KREG_SECRET_SEED");
        remove_scratch_dir(scratch_);
    }
    std::string scratch_;
    WorkerConfinement confinement_;
};

TEST_F(Confined, TheWorkerIsPid2SeesOnlyItsNamespaceAndGetsNoSecret) {
    WorkerProcess w;
    try {
        w = start_script(
            R"sh(n=$(ls /proc | grep -c '^[0-9]'); printf '{"op":"hello","id":"%s:0","pid":%d,"procs":%d,"uid":%d,"secret":"%s","home":"%s","cwd":"%s"}\n' )sh"
            R"sh("$2" $$ "$n" "$(id -u)" "${KREG_SECRET_SEED:-none}" "$HOME" "$(pwd)" >&4; read x <&3)sh",
            &confinement_);
    } catch (const std::exception& e) {
        GTEST_SKIP() << "this machine cannot confine a worker: " << e.what();
    }
    const auto hello = w.exchange(nullptr, 10);
    ASSERT_EQ(hello.outcome, WorkerProcess::Outcome::reply) << hello.violation << w.stderr_tail();
    EXPECT_EQ(hello.message.value("pid", 0), 2);
    // pid 1 (the reaper), the shell, and the subshell, ls and grep of the pipeline: nothing of the host.
    EXPECT_LE(hello.message.value("procs", 99), 5) << "the worker sees processes outside its namespace";
    EXPECT_EQ(hello.message.value("secret", ""), "none");
    EXPECT_EQ(hello.message.value("home", ""), scratch_);
    EXPECT_EQ(hello.message.value("cwd", ""), scratch_);
    if (::geteuid() == 0)
        EXPECT_EQ(hello.message.value("uid", 0), int(kSandboxUid));
    else
        EXPECT_EQ(hello.message.value("uid", 0), int(::geteuid()));
    const nlohmann::json report = w.confinement_report();
    EXPECT_FALSE(report["applied"].empty());
}

// The reaper is a raw clone of the runner: glibc's fork() there would run the runner's pthread_atfork
// handlers (locks a library took, allocation) in a copy whose state glibc does not know, where only
// async-signal-safe calls are allowed. Handlers registered here write to a pipe; the reaper must start
// its program without running any of them.
int atfork_pipe[2] = {-1, -1};
void atfork_mark() {
    if (atfork_pipe[1] >= 0) (void)!::write(atfork_pipe[1], "x", 1);
}

TEST_F(Confined, TheReaperStartsTheWorkerWithoutRunningTheRunnersForkHandlers) {
    ASSERT_EQ(::pipe2(atfork_pipe, O_CLOEXEC | O_NONBLOCK), 0);
    static const bool registered = ::pthread_atfork(atfork_mark, atfork_mark, atfork_mark) == 0;
    ASSERT_TRUE(registered);
    bool started = true;
    {
        WorkerProcess w;
        try {
            w = start_script(kHello + "read x <&3", &confinement_);
        } catch (const std::exception& e) {
            started = false;
            std::cerr << "this machine cannot confine a worker: " << e.what() << "\n";
        }
        if (started) {
            const auto hello = w.exchange(nullptr, 10);
            ASSERT_EQ(hello.outcome, WorkerProcess::Outcome::reply) << hello.violation << w.stderr_tail();
        }
    }
    char buf[64];
    const ssize_t marks = ::read(atfork_pipe[0], buf, sizeof buf);
    ::close(atfork_pipe[1]);
    atfork_pipe[1] = -1;
    ::close(atfork_pipe[0]);
    if (!started) GTEST_SKIP() << "this machine cannot confine a worker";
    EXPECT_LE(marks, 0) << marks << " pthread_atfork handler calls while starting a confined worker";
}

// The reaper is a raw clone of a runner that may have many threads (runner grade --jobs: one per lane).
// glibc's setgroups/setresgid/setresuid there would try to change the identity of every thread in the
// copy's inherited thread list and wait, for ever, on one that was being created when the clone was made
// (an honest student got load_failed, "its reaper did not start it within 30 s", about one --jobs 4 run in
// six). Here a thread is being created and joined all the time while workers start: as root every start
// goes through the identity change, and none may hang.
TEST_F(Confined, AWorkerStartsWhileOtherThreadsAreBeingCreated) {
    std::atomic<bool> stop{false};
    std::thread churn([&stop] {
        while (!stop.load()) std::thread([] {}).join();
    });
    std::string failure;
    int started = 0;
    for (int i = 0; i < 40 && failure.empty(); ++i) {
        try {
            WorkerProcess w = start_script(kHello + "read x <&3", &confinement_);
            const auto hello = w.exchange(nullptr, 10);
            if (hello.outcome != WorkerProcess::Outcome::reply)
                failure = "start " + std::to_string(i) + ": no hello: " + hello.violation + w.stderr_tail();
            ++started;
        } catch (const std::exception& e) {
            failure = "start " + std::to_string(i) + ": " + e.what();
        }
    }
    stop = true;
    churn.join();
    if (started == 0 && failure.find("did not start it within") == std::string::npos)
        GTEST_SKIP() << "this machine cannot confine a worker: " << failure;
    EXPECT_EQ(failure, "") << "after " << started << " workers started";
}

TEST_F(Confined, EverythingTheWorkerStartedEndsWithIt) {
    // A setsid() child and an orphaned grandchild, both outside the worker's process group.
    WorkerProcess w;
    try {
        w = start_script(kHello + "read x <&3; setsid sleep 6271 & (sleep 6272 &); exit 0", &confinement_);
    } catch (const std::exception& e) {
        GTEST_SKIP() << "this machine cannot confine a worker: " << e.what();
    }
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    const auto reply = w.exchange({{"op", "run"}}, 30);
    ASSERT_EQ(reply.outcome, WorkerProcess::Outcome::ended);
    EXPECT_EQ(reply.exit.exit_code, 0);
    for (int i = 0; i < 100 && (process_with_command_line("sleep 6271") || process_with_command_line("sleep 6272"));
         ++i)
        ::usleep(20 * 1000);  // SIGKILL is delivered at once, the exit takes a moment
    EXPECT_FALSE(process_with_command_line("sleep 6271")) << "a setsid() child outlived its worker";
    EXPECT_FALSE(process_with_command_line("sleep 6272")) << "an orphan outlived its worker";
}

TEST_F(Confined, TheScratchFolderIsABoundedTmpfsThatLeavesNothingOnDisk) {
    confinement_.scratch_tmpfs_bytes = 1 << 20;
    WorkerProcess w;
    try {
        w = start_script(R"sh(head -c 3000000 /dev/zero > big 2>/dev/null; full=$?; echo small > small; )sh"
                         R"sh(printf '{"op":"hello","id":"%s:0","full":%d}\n' "$2" "$full" >&4; read x <&3)sh",
                         &confinement_);
    } catch (const std::exception& e) {
        GTEST_SKIP() << "this machine cannot confine a worker: " << e.what();
    }
    const auto hello = w.exchange(nullptr, 10);
    ASSERT_EQ(hello.outcome, WorkerProcess::Outcome::reply) << hello.violation << w.stderr_tail();
    const nlohmann::json report = w.confinement_report();
    if (report["applied"].dump().find("private tmpfs") == std::string::npos)
        GTEST_SKIP() << "no tmpfs here: " << report.dump();
    EXPECT_NE(hello.message.value("full", 0), 0) << "3 MB fit into a 1 MiB scratch folder";
    EXPECT_FALSE(std::filesystem::exists(scratch_ + "/small")) << "the worker's files reached the disk";
    EXPECT_FALSE(std::filesystem::exists(scratch_ + "/big"));
}

TEST_F(Confined, AStoppedConfinedWorkerIsKilledByItsReaper) {
    WorkerProcess w;
    try {
        w = start_script(kHello + "read x <&3; kill -STOP $$; sleep 30", &confinement_);
    } catch (const std::exception& e) {
        GTEST_SKIP() << "this machine cannot confine a worker: " << e.what();
    }
    {
        const auto h = w.exchange(nullptr, 10);
        ASSERT_EQ(h.outcome, WorkerProcess::Outcome::reply) << h.violation;
    }
    const auto reply = w.exchange({{"op", "run"}}, 60);
    ASSERT_EQ(reply.outcome, WorkerProcess::Outcome::ended);
    EXPECT_EQ(reply.exit.stopped, "SIGSTOP");
}

// The grader killed with SIGKILL (an operator's kill -9, the OOM killer) takes its confined workers
// along: as root the reaper takes the sandbox's identity, which clears the parent-death signal, so it
// must arm it again (it did not, and a hanging submission's worker outlived the grader).
TEST_F(Confined, TheWorkerDiesWithTheProcessThatStartedIt) {
    int ready[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    const pid_t grader = ::fork();
    ASSERT_GE(grader, 0);
    if (grader == 0) {
        ::close(ready[0]);
        try {
            WorkerProcess w = start_script("sleep 6273; exit 0", &confinement_);
            const char yes = 'y';
            (void)!::write(ready[1], &yes, 1);
            for (;;) ::pause();
        } catch (const std::exception&) {
            const char no = 'n';
            (void)!::write(ready[1], &no, 1);
            ::_exit(77);
        }
    }
    ::close(ready[1]);
    char started = 0;
    const bool got = ::read(ready[0], &started, 1) == 1;
    ::close(ready[0]);
    if (!got || started != 'y') {
        ::kill(grader, SIGKILL);
        ::waitpid(grader, nullptr, 0);
        GTEST_SKIP() << "this machine cannot confine a worker";
    }
    for (int i = 0; i < 250 && !process_with_command_line("sleep 6273"); ++i) ::usleep(20 * 1000);
    ASSERT_TRUE(process_with_command_line("sleep 6273")) << "the confined worker did not start";
    ::kill(grader, SIGKILL);
    ::waitpid(grader, nullptr, 0);
    for (int i = 0; i < 100 && process_with_command_line("sleep 6273"); ++i) ::usleep(20 * 1000);
    const bool outlived = process_with_command_line("sleep 6273");
    if (outlived)  // do not leave it behind: the worker and its reaper (the worker's parent)
        (void)!std::system(
            "for p in $(pgrep -x -f 'sleep 6273'); do "
            "kill -KILL $(awk '/^PPid:/{print $2}' /proc/$p/status) $p; done");
    EXPECT_FALSE(outlived) << "the confined worker outlived the process that started it";
}

TEST(ConfinementCheck, SaysWhyNotOrNothing) {
    const std::string why = why_confinement_fails("/bin/true");  // `true --version` exits 0
    if (!why.empty()) GTEST_SKIP() << "this machine cannot confine a program: " << why;
    EXPECT_NE(why_confinement_fails("/nonexistent/runner"), "");
    EXPECT_NE(why_confinement_fails("/bin/false"), "");
}

TEST(ConfinedEnvironment, OnlyAllowListedNamesPass) {
    ::setenv("KREG_SECRET_SEED", "1", 1);
    ::setenv("GITHUB_TOKEN", "x", 1);
    ::setenv("PATH", "/usr/bin:/bin", 1);
    const auto env = confined_environment("/scratch", worker_environment_names());
    for (const std::string& e : env) {
        EXPECT_NE(e.rfind("KREG_SECRET_SEED=", 0), 0u);
        EXPECT_NE(e.rfind("GITHUB_TOKEN=", 0), 0u);
    }
    EXPECT_NE(std::find(env.begin(), env.end(), "PATH=/usr/bin:/bin"), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/scratch"), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "TMPDIR=/scratch"), env.end());
    ::unsetenv("KREG_SECRET_SEED");
    ::unsetenv("GITHUB_TOKEN");
}

}  // namespace
}  // namespace kreg
