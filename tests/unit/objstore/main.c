/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- unit tests of objstore/. */
#include "tests/unit/unit.h"

extern CU_TestInfo mt_test_allocator[];
extern CU_TestInfo mt_test_client[];
int mt_test_client_init(void);
int mt_test_client_cleanup(void);
extern CU_TestInfo mt_test_arena[];
extern CU_TestInfo mt_test_eviction_lru[];
extern CU_TestInfo mt_test_idmap[];
extern CU_TestInfo mt_test_protocol[];
extern CU_TestInfo mt_test_server[];
int mt_test_server_init(void);
int mt_test_server_cleanup(void);
extern CU_TestInfo mt_test_store[];
extern CU_TestInfo mt_test_store_main[];
extern CU_TestInfo mt_test_tensor[];
extern CU_TestInfo mt_test_transfer[];

static const struct mt_suite suites[] = {
    {"allocator", mt_test_allocator, NULL, NULL},
    {"arena", mt_test_arena, NULL, NULL},
    {"client", mt_test_client, mt_test_client_init, mt_test_client_cleanup},
    {"eviction_lru", mt_test_eviction_lru, NULL, NULL},
    {"idmap", mt_test_idmap, NULL, NULL},
    {"protocol", mt_test_protocol, NULL, NULL},
    {"server", mt_test_server, mt_test_server_init, mt_test_server_cleanup},
    {"store", mt_test_store, NULL, NULL},
    {"store_main", mt_test_store_main, NULL, NULL},
    {"tensor", mt_test_tensor, NULL, NULL},
    {"transfer", mt_test_transfer, NULL, NULL},
    {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    return mt_unit_main(argc, argv, suites);
}
