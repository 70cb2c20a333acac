#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A float DeepLabV3+-style graph for the fp16 data-movement figures of drivers/compiler/rknpu/COMPILER.md ("Data
movement", fp16): stride-2 convs, an ASPP branch Pad + dilated conv, bilinear x2, Concat along W and H,
Gather along W / H / C, bilinear x4. usage: deeplab_float_net.py OUT.onnx"""
import sys
import numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
rng=np.random.RandomState(1)
nodes=[];inits=[]
def init(n,a):
    inits.append(numpy_helper.from_array(np.asarray(a),n)); return n
def conv(x,y,cin,cout,k=3,s=1,p=1,d=1):
    w=init(y+"_w",(rng.randn(cout,cin,k,k)*(1.0/np.sqrt(cin*k*k))).astype(np.float32))
    b=init(y+"_b",(rng.randn(cout)*0.1).astype(np.float32))
    nodes.append(helper.make_node("Conv",[x,w,b],[y+"_c"],name=y,strides=[s,s],pads=[p]*4,dilations=[d,d]))
    nodes.append(helper.make_node("Relu",[y+"_c"],[y],name=y+"_relu")); return y
H=128
x="x"
a=conv(x,"s1",3,16,s=2)          # 64
a=conv(a,"s2",16,32,s=2)         # 32
low=a
a=conv(a,"s3",32,64,s=2)         # 16
# ASPP with Pad (constant 0) before a dilated conv
init("pads",np.array([0,0,2,2,0,0,2,2],np.int64)); init("pv",np.array(0,np.float32))
nodes.append(helper.make_node("Pad",[a,"pads","pv"],["ap"],name="aspp_pad"))
b1=conv("ap","aspp2",64,32,p=0,d=2)
b2=conv(a,"aspp1",64,32,k=1,p=0)
nodes.append(helper.make_node("Concat",[b1,b2],["cat"],name="aspp_cat",axis=1))
a=conv("cat","proj",64,32,k=1,p=0)
init("roi",np.zeros(0,np.float32)); init("sc",np.array([1,1,2,2],np.float32))
nodes.append(helper.make_node("Resize",[a,"roi","sc"],["up"],name="up_bilinear",mode="linear",coordinate_transformation_mode="half_pixel"))
# Concat along W and H of up and low, then Gather along H / C
nodes.append(helper.make_node("Concat",["up",low],["catw"],name="cat_w",axis=3))
init("gi",np.arange(0,64,2).astype(np.int64))
nodes.append(helper.make_node("Gather",["catw","gi"],["gw"],name="gather_w_even",axis=3))   # W-gather (not one row: stays CPU)
nodes.append(helper.make_node("Concat",["up",low],["cath"],name="cat_h",axis=2))
init("gh",np.arange(63,0,-2).astype(np.int64))
nodes.append(helper.make_node("Gather",["cath","gh"],["gh_o"],name="gather_h",axis=2))
init("gc",np.array(list(range(31,-1,-1)),np.int64))
nodes.append(helper.make_node("Gather",["gh_o","gc"],["gc_o"],name="gather_c",axis=1))
a=conv("gc_o","dec",32,32)
nodes.append(helper.make_node("Concat",[a,"gw"],["dcat"],name="dec_cat",axis=1))
a=conv("dcat","cls",64,8,k=1,p=0)
init("sc4",np.array([1,1,4,4],np.float32))
nodes.append(helper.make_node("Resize",[a,"roi","sc4"],["y"],name="out_bilinear",mode="linear",coordinate_transformation_mode="half_pixel"))
g=helper.make_graph(nodes,"deeplab_float_mini",[helper.make_tensor_value_info("x",TensorProto.FLOAT,[1,3,H,H])],
  [helper.make_tensor_value_info("y",TensorProto.FLOAT,[1,8,128,128])],inits)
m=helper.make_model(g,opset_imports=[helper.make_opsetid("",13)]); m.ir_version=8
m=onnx.shape_inference.infer_shapes(m); onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
