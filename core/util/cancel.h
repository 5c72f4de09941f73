#pragma once
// Cooperative cancellation and pausing shared between a worker thread and whoever drives it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "util/error.h"

namespace wl {

class CancelToken {
public:
    void cancel() {
        cancelled_.store(true);
        resume();
    }
    bool isCancelled() const { return cancelled_.load(); }

    void pause() { paused_.store(true); }
    void resume() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            paused_.store(false);
        }
        cv_.notify_all();
    }
    bool isPaused() const { return paused_.load(); }

    // Called by workers at safe points: blocks while paused, throws Cancelled when cancelled.
    void checkpoint() {
        if (paused_.load()) {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [&] { return !paused_.load() || cancelled_.load(); });
        }
        if (cancelled_.load()) throw Cancelled();
    }

private:
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> paused_{false};
    std::mutex mutex_;
    std::condition_variable cv_;
};

}  // namespace wl
