module vireo.bench/tools

go 1.22
