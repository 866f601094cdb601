# fleet_sim (bench/fleet/fleet_sim.cpp): many hosts' agents in one process.
# Included from tests/fleet (its small run is the test fleet.simulator,
# built without the benchmarks) and from bench/fleet (the 200-host table);
# defined once, where it is included first.
include_guard(GLOBAL)
add_executable(fleet_sim ${CMAKE_CURRENT_LIST_DIR}/fleet_sim.cpp)
target_link_libraries(fleet_sim PRIVATE lb_agent CLI11::CLI11 lb_build_options)
