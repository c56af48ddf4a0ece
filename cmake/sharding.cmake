# Sharding, workers and report merge from the outside (tests/sharding.sh): runs the CLI itself.
add_test(NAME sharding COMMAND ${PROJECT_SOURCE_DIR}/tests/sharding.sh $<TARGET_FILE:bitgate> ${PROJECT_SOURCE_DIR})
set_tests_properties(sharding PROPERTIES TIMEOUT 900)
