/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_stub_partial.c -- libmt_nvml_partial.so: an "NVML" that exports
 * nvmlInit_v2 and nothing else, so the worker must log the missing symbol
 * and fall back (test_gpu.py).
 */
__attribute__((visibility("default"))) int nvmlInit_v2(void)
{
    return 0;
}
