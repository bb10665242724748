// An empty program linked against LibTorch as attnscan is: what loading LibTorch costs every process
// (the dynamic loader's relocations over the ~290 libraries Debian's LibTorch needs, then their static
// initialisers) before a line of attnscan runs. bench/overhead_bench.py times it beside each run.
int main() { return 0; }
