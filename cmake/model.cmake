# model/: weights, the forward graph, the host runner and the verbs (in the engine); the device
# runner under model/cuda/ where CUDA is built, its stand-in under model/nocuda/ otherwise.
file(GLOB BITGATE_MODEL_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/model/*.cpp)
file(GLOB BITGATE_MODEL_CUDA_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/model/cuda/*.cu ${PROJECT_SOURCE_DIR}/model/cuda/*.cpp)
file(GLOB BITGATE_MODEL_NOCUDA_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/model/nocuda/*.cpp)
target_sources(bitgate_engine PRIVATE ${BITGATE_MODEL_SRC})
if(BITGATE_HAVE_CUDA)
  target_sources(bitgate_engine PRIVATE ${BITGATE_MODEL_CUDA_SRC})
else()
  target_sources(bitgate_engine PRIVATE ${BITGATE_MODEL_NOCUDA_SRC})
endif()
target_include_directories(bitgate_engine PUBLIC ${PROJECT_SOURCE_DIR}/model)
target_include_directories(bitgate_engine PRIVATE ${PROJECT_SOURCE_DIR}/refimpl ${PROJECT_SOURCE_DIR}/kernels)
