"""Terminating an instance deletes its primary network interface, as AWS does, unless the launch said not to."""


def _subnet(ec2):
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    return ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]


def _image(ec2):
    return ec2.describe_images()["Images"][0]["ImageId"]


def _enis(ec2, subnet):
    return ec2.describe_network_interfaces(Filters=[{"Name": "subnet-id", "Values": [subnet]}])["NetworkInterfaces"]


def test_primary_interface_goes_with_the_instance(ec2):
    subnet = _subnet(ec2)
    instance = ec2.run_instances(ImageId=_image(ec2), MinCount=1, MaxCount=1, SubnetId=subnet)["Instances"][0]
    [eni] = _enis(ec2, subnet)
    assert eni["Attachment"]["DeleteOnTermination"] is True
    ec2.terminate_instances(InstanceIds=[instance["InstanceId"]])
    assert _enis(ec2, subnet) == []


def test_an_explicit_false_keeps_the_interface(ec2):
    subnet = _subnet(ec2)
    nic = {"DeviceIndex": 0, "SubnetId": subnet, "DeleteOnTermination": False}
    instance = ec2.run_instances(ImageId=_image(ec2), MinCount=1, MaxCount=1, NetworkInterfaces=[nic])["Instances"][0]
    ec2.terminate_instances(InstanceIds=[instance["InstanceId"]])
    assert len(_enis(ec2, subnet)) == 1


def test_a_nat_gateways_interface_is_requester_managed_and_goes_with_it(ec2):
    subnet = _subnet(ec2)
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation)["NatGateway"]["NatGatewayId"]
    [eni] = _enis(ec2, subnet)
    assert (eni["Status"], eni["RequesterManaged"], eni["InterfaceType"]) == ("in-use", True, "nat_gateway")
    ec2.delete_nat_gateway(NatGatewayId=nat)
    assert _enis(ec2, subnet) == []
    ec2.release_address(AllocationId=allocation)
    assert ec2.describe_addresses()["Addresses"] == []
