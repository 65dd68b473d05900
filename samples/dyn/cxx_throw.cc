// cxx_throw: a C++ exception thrown inside libstdc++.so.6 (std::__throw_out_of_range,
// what std::vector::at calls) unwinds through this program's frames, running a
// destructor on the way (a cleanup landing pad: _Unwind_Resume from libgcc_s.so.1), and
// is caught here by its base class std::exception (typeinfo from libstdc++).
//
// Built with -nostdinc++ -nostdlib++ against the Debian rootfs's libstdc++.so.6, so the
// few declarations needed are written out here; they are libstdc++'s ABI (Itanium C++ ABI).
namespace std {
class exception {
public:
    virtual ~exception() noexcept;
    virtual const char *what() const noexcept;
};
[[noreturn]] void __throw_out_of_range(const char *);
}  // namespace std

extern "C" int printf(const char *, ...);

struct Guard {
    const char *name;
    explicit Guard(const char *n) : name(n) { printf("enter %s\n", name); }
    ~Guard() { printf("leave %s\n", name); }
};

int checked_at(int index)
{
    Guard guard("checked_at");
    if (index >= 3)
        std::__throw_out_of_range("index out of range: 7 >= 3");
    return index * 10;
}

int main()
{
    int caught = 0;
    for (int index = 2; index <= 7; index += 5) {
        try {
            printf("value %d\n", checked_at(index));
        } catch (const std::exception &error) {
            printf("caught: %s\n", error.what());
            caught++;
        }
    }
    return caught == 1 ? 0 : 1;
}
