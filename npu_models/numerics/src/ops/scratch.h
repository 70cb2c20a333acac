// SPDX-License-Identifier: MIT
// Reusable uninitialised scratch memory for the hot int8 path. std::vector::resize value-
// initialises every element past size(), so a buffer whose requested size changes from layer to
// layer would be re-zeroed on every call; this one only grows and never clears.
#pragma once
#include <cstddef>
#include <memory>

namespace num::ops {

template <typename T>
class Scratch {
   public:
    /// At least n elements, contents unspecified.
    T* get(size_t n) {
        if (n > cap_) {
            buf_.reset(new T[n]);  // default-initialised: no zeroing for arithmetic T
            cap_ = n;
        }
        return buf_.get();
    }

   private:
    std::unique_ptr<T[]> buf_;
    size_t cap_ = 0;
};

}  // namespace num::ops
