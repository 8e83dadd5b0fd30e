/* What one submission costs on a Vulkan driver, apart from any work: an empty command buffer
 * (or one of N 48-byte copies, each followed by a barrier) submitted and its fence waited for,
 * polling with sched_yield as vkinfer does on lavapipe's submit thread, or blocking. Medians of
 * 3,000 submissions after 200. Session 25, lavapipe (Mesa 22.3) on the 2-core VM with
 * LP_NUM_THREADS=0: empty 10.5-10.7 us at least, 14.8-15.3 a median, polled; ten copies add
 * about 1.5 us (docs/results-lavapipe.md).
 *   gcc -O2 -o /tmp/submit_probe bench/probes/submit_probe.c -lvulkan
 *   LP_NUM_THREADS=0 /tmp/submit_probe poll|block [COPIES] */

#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int poll=argc>1&&!strcmp(argv[1],"poll");
  VkApplicationInfo ai={VK_STRUCTURE_TYPE_APPLICATION_INFO,0,"s",0,"s",0,VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici={VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,0,0,&ai};
  VkInstance inst; if(vkCreateInstance(&ici,0,&inst)) return 1;
  uint32_t n=1; VkPhysicalDevice pd; vkEnumeratePhysicalDevices(inst,&n,&pd);
  float pr=1; VkDeviceQueueCreateInfo q={VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,0,0,0,1,&pr};
  VkDeviceCreateInfo dci={VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,0,0,1,&q};
  VkDevice dev; if(vkCreateDevice(pd,&dci,0,&dev)) return 2;
  VkQueue queue; vkGetDeviceQueue(dev,0,0,&queue);
  VkCommandPoolCreateInfo pci={VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,0,0,0};
  VkCommandPool pool; vkCreateCommandPool(dev,&pci,0,&pool);
  VkCommandBufferAllocateInfo cai={VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,0,pool,VK_COMMAND_BUFFER_LEVEL_PRIMARY,1};
  VkCommandBuffer cb; vkAllocateCommandBuffers(dev,&cai,&cb);
  VkCommandBufferBeginInfo bi={VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  int copies=argc>2?atoi(argv[2]):0;
  VkBuffer b[2]; VkDeviceMemory m[2];
  for(int k=0;k<2;k++){VkBufferCreateInfo bci={VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,0,0,256,VK_BUFFER_USAGE_TRANSFER_SRC_BIT|VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    vkCreateBuffer(dev,&bci,0,&b[k]); VkMemoryRequirements r; vkGetBufferMemoryRequirements(dev,b[k],&r);
    VkMemoryAllocateInfo mai={VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,0,r.size,0}; vkAllocateMemory(dev,&mai,0,&m[k]); vkBindBufferMemory(dev,b[k],m[k],0);}
  vkBeginCommandBuffer(cb,&bi);
  for(int k=0;k<copies;k++){VkBufferCopy c={0,0,48}; vkCmdCopyBuffer(cb,b[0],b[1],1,&c);
    VkMemoryBarrier mb={VK_STRUCTURE_TYPE_MEMORY_BARRIER,0,VK_ACCESS_TRANSFER_WRITE_BIT,VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(cb,VK_PIPELINE_STAGE_TRANSFER_BIT,VK_PIPELINE_STAGE_TRANSFER_BIT,0,1,&mb,0,0,0,0);}
  vkEndCommandBuffer(cb);
  VkFenceCreateInfo fci={VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}; VkFence f; vkCreateFence(dev,&fci,0,&f);
  enum{N=3000}; static double t[N];
  for(int i=0;i<N+200;i++){
    vkResetFences(dev,1,&f);
    VkSubmitInfo si={VK_STRUCTURE_TYPE_SUBMIT_INFO,0,0,0,0,1,&cb};
    double t0=now();
    vkQueueSubmit(queue,1,&si,f);
    if(poll) while(vkGetFenceStatus(dev,f)==VK_NOT_READY) sched_yield();
    vkWaitForFences(dev,1,&f,1,~0ull);
    if(i>=200) t[i-200]=now()-t0;
  }
  qsort(t,N,sizeof*t,cmpd);
  printf("copies %d %s: min %.1f median %.1f p90 %.1f us\n",copies,poll?"poll":"block",t[0],t[N/2],t[N*9/10]);
  return 0;
}
