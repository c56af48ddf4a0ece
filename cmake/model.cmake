# The forward pass's device runner: model/cuda/ where CUDA is built, its stand-in model/nocuda/
# otherwise (model/*.cpp is in the engine already). The runners call the host models and the
# launchers.
file(GLOB BITGATE_MODEL_CUDA_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/model/cuda/*.cu ${PROJECT_SOURCE_DIR}/model/cuda/*.cpp)
file(GLOB BITGATE_MODEL_NOCUDA_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/model/nocuda/*.cpp)
if(BITGATE_HAVE_CUDA)
  target_sources(bitgate_engine PRIVATE ${BITGATE_MODEL_CUDA_SRC})
else()
  target_sources(bitgate_engine PRIVATE ${BITGATE_MODEL_NOCUDA_SRC})
endif()
target_include_directories(bitgate_engine PRIVATE ${PROJECT_SOURCE_DIR}/refimpl ${PROJECT_SOURCE_DIR}/kernels)
